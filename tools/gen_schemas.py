#!/usr/bin/env python3
"""Generate kdump's schema tables (``kdump/format/schemas/*.py``) from Kafka's message definitions.

Usage: ``python tools/gen_schemas.py KAFKA [--rev REV] [--baseline KAFKA@REV] [--branch B] [--read-in TEXT]
[--repository OWNER/NAME]`` where KAFKA is a Kafka checkout (a work tree), a bare git directory holding apache/kafka's
history (then the files are read at REV, default HEAD; ``--repository`` says whose history it is, ``--branch`` which
branch REV is on and ``--read-in`` which copy was read, e.g. another repository's mirror holding the same commits),
or a local directory of definitions laid out as Kafka's tree (``group-coordinator/src/main/resources/common/message/
X.json`` ...) with a ``SOURCES.json`` manifest beside them: ``{"kafka_commit": ..., "how": ..., "files": {path:
{"commit": ..., "note": ..., "path": ...}}, "superseded_record_types": {module: {type: [key, value]}}}`` saying which
Kafka commit each file was read at (``path``: where it sits in Kafka's tree, when not at the manifest's path, as under
``superseded/``). Groups whose directories the input lacks are left as they are.

For each group of internal-topic records (see ``GROUPS``) the definitions of that group's directory are
read (Kafka's JSON with ``//`` comments), reduced to the facts the reader needs (names, types, version
ranges, nullability, tags, defaults; no documentation text) and written as one Python data module with:

* ``KAFKA_COMMIT``: where the definitions came from (the revision read, or a manifest's ``kafka_commit``);
* ``SOURCES``: message name -> (Kafka commit, path in Kafka's tree) it was read from, ``PROVENANCE``: message
  name -> where it was read (a bare git directory: the repository, commit, branch and date, and the commit that
  last changed the file; a manifest: its note), and ``HOW``: how the definitions were gathered (not for a
  checkout);
* ``SUPERSEDED``: message name -> older definitions of the same versions (a manifest's ``superseded/`` tree; from a
  bare git directory, the baseline's definitions whose layout the newest do not read the same way, or that the
  newest lack), tried when a record does not decode whole with the newest; ``SUPERSEDED_RECORD_TYPES``: record
  type -> (key, value) of the baseline where the newest pair the type otherwise or not at all;
* ``MESSAGES``: message name -> definition (as :func:`kdump.format.schema.compile_message` takes it);
* ``RECORD_TYPES``: for coordinator topics, record type -> (key message, value message), derived the way
  Kafka's ``CoordinatorRecordSerde`` pairs them (a key's ``validVersions`` are the record types it
  serves, or its ``apiKey`` for ``coordinator-key`` definitions; the value is the message of the same
  name ending in ``Value``); for metadata-style topics, apiKey -> (message, Kafka's record type name).

* ``BASELINE_COMMIT``/``BASELINE_RECORD_TYPES`` (coordinator topics, with ``--baseline``): the record types of
  the release before the newest definitions, read from its definitions; the decoders name a record of a newer
  type that does not decode with its definition as that release's tool does ("Unknown record type").

Run it again for a new Kafka release and commit the regenerated modules.
"""
from __future__ import annotations

import argparse
import json
import os
import pprint
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "kdump", "format", "schemas")

# module -> (what it holds, directories in Kafka, name filter, how record types are found)
GROUPS = {
    "group_coordinator": ("__consumer_offsets records (group coordinator)",
                          ["group-coordinator/src/main/resources/common/message"], r".*(Key|Value)$", "coordinator"),
    "transaction_coordinator": ("__transaction_state records",
                                ["transaction-coordinator/src/main/resources/common/message"], r".*(Key|Value)$",
                                "coordinator"),
    "share_coordinator": ("__share_group_state records",
                          ["share-coordinator/src/main/resources/common/message"], r".*(Key|Value)$", "coordinator"),
    "metadata": ("KRaft __cluster_metadata records", ["metadata/src/main/resources/common/metadata"], r".*",
                 "metadata"),
    "remote_log_metadata": ("__remote_log_metadata records (TopicBasedRemoteLogMetadataManager)",
                            ["storage/src/main/resources/message"], r"Remote.*", "metadata"),
    "raft_control": ("KRaft control records and the consumer protocol embedded in group metadata",
                     ["clients/src/main/resources/common/message"],
                     r"(LeaderChangeMessage|SnapshotHeaderRecord|SnapshotFooterRecord|KRaftVersionRecord|VotersRecord"
                     r"|ConsumerProtocolSubscription|ConsumerProtocolAssignment)$", None),
}
FIELD_KEYS = ("name", "type", "versions", "nullableVersions", "taggedVersions", "tag", "default", "flexibleVersions",
              "ignorable")
MESSAGE_KEYS = ("name", "type", "apiKey", "validVersions", "flexibleVersions")


class Source:
    def __init__(self, path: str, rev: str, *, repository: str = "apache/kafka", branch: str = "?",
                 read_in: str = "?"):
        self.path = path
        self.rev = rev
        # for a bare git directory: whose history it is, the branch the revision is on, and which copy was read
        self.repository = repository
        self.branch = branch
        self.read_in = read_in
        manifest = os.path.join(path, "SOURCES.json")
        self.manifest = None
        if os.path.isfile(manifest):
            with open(manifest, encoding="utf-8") as f:
                self.manifest = json.load(f)
        self.work_tree = self.manifest is not None or os.path.isdir(os.path.join(path, "clients"))

    def has(self, directory: str) -> bool:
        return not self.work_tree or os.path.isdir(os.path.join(self.path, directory))

    def file_source(self, rel: str) -> tuple[str, str] | None:
        """(commit, path in Kafka's tree) a definition was read at: from the manifest (an entry's ``path`` where
        the file sits elsewhere, as under ``superseded/``), the revision read for a bare git directory, None for
        a checkout."""
        if self.manifest is None:
            return None if self.work_tree else (self.commit(), rel)
        entry = self.manifest["files"].get(rel)
        if entry is None:
            raise SystemExit(f"{rel} is not in SOURCES.json")
        return entry["commit"], entry.get("path", rel)

    def file_note(self, rel: str) -> str | None:
        """How the manifest says a definition was found and why it is taken as the newest (None: it says nothing)."""
        if self.manifest is None:
            return None
        return self.manifest["files"].get(rel, {}).get("note") or None

    def commit(self) -> str:
        if self.manifest is not None:
            return self.manifest["kafka_commit"]
        args = ["git", "-C", self.path, "rev-parse", "HEAD" if self.work_tree else f"{self.rev}^{{commit}}"]
        try:
            return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return "unknown"

    def git_log(self, fmt: str, rel: str | None = None) -> str:
        """``git log -1`` of the input's revision (of the last commit that changed ``rel`` when given), in
        ``fmt``; only for a bare git directory."""
        args = ["git", "--git-dir", self.path, "log", "-1", f"--format={fmt}", "--date=short", self.rev]
        return subprocess.run(args + (["--", rel] if rel else []), check=True, capture_output=True,
                              text=True).stdout.strip()

    def list(self, directory: str) -> list[str]:
        if self.work_tree:
            d = os.path.join(self.path, directory)
            return sorted(os.path.join(directory, n) for n in os.listdir(d) if n.endswith(".json"))
        out = subprocess.run(["git", "--git-dir", self.path, "ls-tree", "--name-only", f"{self.rev}:{directory}"],
                             check=True, capture_output=True, text=True).stdout.split()
        return sorted(f"{directory}/{n}" for n in out if n.endswith(".json"))

    def read(self, rel: str) -> str:
        if self.work_tree:
            with open(os.path.join(self.path, rel), encoding="utf-8") as f:
                return f.read()
        return subprocess.run(["git", "--git-dir", self.path, "show", f"{self.rev}:{rel}"], check=True,
                              capture_output=True, text=True).stdout


def strip_comments(text: str) -> str:
    """Kafka's message JSON allows ``//`` line comments; drop them outside strings."""
    out = []
    for line in text.splitlines():
        in_string = False
        escaped = False
        for i, ch in enumerate(line):
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = not in_string
            elif ch == "/" and not in_string and line[i + 1:i + 2] == "/":
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


def reduce_field(f: dict) -> dict:
    out = {k: f[k] for k in FIELD_KEYS if k in f}
    if "fields" in f:
        out["fields"] = [reduce_field(x) for x in f["fields"]]
    return out


def reduce_message(m: dict) -> dict:
    out = {k: m[k] for k in MESSAGE_KEYS if k in m}
    out["fields"] = [reduce_field(f) for f in m.get("fields", ())]
    if m.get("commonStructs"):
        out["commonStructs"] = [{"name": c["name"], "versions": c.get("versions"),
                                 "fields": [reduce_field(f) for f in c["fields"]]} for c in m["commonStructs"]]
    return out


def versions_range(text: str) -> range:
    text = text.strip()
    if text.endswith("+"):
        raise ValueError(f"open-ended key versions {text}")
    lo, sep, hi = text.partition("-")
    return range(int(lo), int(hi if sep else lo) + 1)


def snake_upper(name: str) -> str:
    """Kafka's MessageGenerator.toSnakeCase(name).toUpperCase(): the MetadataRecordType enum name."""
    out, prev_cap = [], True
    for ch in name:
        if ch.isupper():
            if not prev_cap:
                out.append("_")
            out.append(ch.lower())
            prev_cap = True
        else:
            out.append(ch)
            prev_cap = False
    return "".join(out).upper()


def record_types(messages: dict, how: str | None) -> dict:
    types: dict = {}
    if how == "coordinator":
        for name, m in messages.items():
            if not name.endswith("Key"):
                continue
            value = name[:-3] + "Value"
            if value not in messages:
                raise SystemExit(f"{name} has no {value}")
            ids = [int(m["apiKey"])] if m.get("type") == "coordinator-key" else versions_range(m["validVersions"])
            for t in ids:
                if t in types:
                    raise SystemExit(f"record type {t} claimed by {types[t][0]} and {name}")
                types[t] = (name, value)
    elif how == "metadata":
        for name, m in messages.items():
            if "apiKey" in m:
                types[int(m["apiKey"])] = (name, snake_upper(name))
    return dict(sorted(types.items()))


def read_messages(src: Source, module: str) -> tuple[dict, dict, dict]:
    """(message name -> reduced definition, message name -> (commit, path), message name -> the manifest's note on
    where and how it was found) of a group; the last two only for a manifest's input."""
    _, dirs, pattern, _ = GROUPS[module]
    messages = {}
    sources = {}
    notes = {}
    for d in dirs:
        for rel in src.list(d):
            base = os.path.basename(rel)[:-5]
            if not re.fullmatch(pattern, base) or base.endswith(("Request", "Response")):
                continue
            m = json.loads(strip_comments(src.read(rel)))
            messages[m["name"]] = reduce_message(m)
            where = src.file_source(rel)
            if where is not None:
                sources[m["name"]] = where
            note = src.file_note(rel)
            if note is not None:
                notes[m["name"]] = note
    return dict(sorted(messages.items())), sources, notes


def baseline_types(baseline: Source | None, module: str) -> tuple[str, list[int]] | None:
    """(commit, record types) of a coordinator group at the baseline release (the one before the newest
    definitions): the decoders name a newer type that does not decode as the baseline's tool names it."""
    _, dirs, _, how = GROUPS[module]
    if baseline is None or how != "coordinator" or not all(baseline.has(d) for d in dirs):
        return None
    return baseline.commit(), sorted(record_types(read_messages(baseline, module)[0], how))


def _in(text: str | None, version: int) -> bool:
    """Whether ``version`` is in a definition's version range text ("0+", "1-3", "2", "none")."""
    if not text or text == "none":
        return False
    if text.endswith("+"):
        return version >= int(text[:-1])
    lo, _, hi = text.partition("-")
    return int(lo) <= version <= int(hi or lo)


def layout(m: dict, version: int) -> list:
    """What a reader must know to read message ``m`` at ``version``: its untagged fields' types and nullability
    in order (tagged fields carry their own sizes), struct fields' recursively, and whether a tag buffer follows."""
    commons = {c["name"]: c["fields"] for c in m.get("commonStructs", ())}
    flexible = _in(m.get("flexibleVersions"), version)

    def fields(fs: list) -> list:
        out = []
        for f in fs:
            if not _in(f.get("versions"), version) or _in(f.get("taggedVersions"), version):
                continue
            inner = f.get("fields") or commons.get(f["type"].removeprefix("[]"))
            out.append((f["type"].startswith("[]"), f["type"] if inner is None else "struct",
                        _in(f.get("nullableVersions"), version), fields(inner) if inner else None))
        return out

    return [flexible, fields(m["fields"])]


def read_version(m: dict, record_type: int | None) -> int:
    """The version a key is read at for a record type (its record type, or 0 for a ``coordinator-key``)."""
    return 0 if m.get("type") == "coordinator-key" or record_type is None else record_type


def superseded_by_baseline(baseline: Source, module: str, messages: dict) -> tuple[dict, dict, dict, dict]:
    """(message name -> [definition], record type -> (key, value), message name -> (commit, path), notes) of the
    baseline's definitions the newest ones do not read the same way: a record type the newest do not pair the
    same, a message they lack, or one whose layout differs at a version the baseline defines (a record the
    baseline release wrote decodes with them)."""
    how = GROUPS[module][3]
    old, old_sources, _ = read_messages(baseline, module)
    types, old_types = record_types(messages, how), record_types(old, how)
    superseded: dict = {}
    superseded_types = {t: pair for t, pair in old_types.items() if types.get(t) != pair}
    key_types = {pair[0]: t for t, pair in old_types.items()} if how == "coordinator" else {}
    for name, m in old.items():
        if name not in messages:
            changed = True
        elif name in key_types:
            t = key_types[name]
            changed = layout(m, read_version(m, t)) != layout(messages[name], read_version(messages[name], t))
        else:
            changed = any(layout(m, v) != layout(messages[name], v) for v in versions_range(m["validVersions"]))
        if changed:
            superseded[name] = [m]
    commit, date = baseline.commit(), baseline.git_log("%ad") if not baseline.work_tree else "?"
    sources = {f"{n} (superseded)": (commit, old_sources[n][1] if n in old_sources else "?") for n in superseded}
    notes = {f"{n} (superseded)": f"{baseline.repository}@{commit[:12]} ({date}, the baseline): read the same version "
                                  f"differently from the newest definition, or absent from it"
             for n in superseded}
    return superseded, superseded_types, sources, notes


def generate(src: Source, module: str, baseline: Source | tuple[str, list[int]] | None = None) -> str:
    """The module's text; ``baseline``: a Source of the baseline release's definitions (or its (commit, record
    types) as :func:`baseline_types` gives them) for ``BASELINE_COMMIT``/``BASELINE_RECORD_TYPES``; from a bare
    git directory with a baseline Source, the baseline's definitions the newest do not read the same way
    become ``SUPERSEDED``/``SUPERSEDED_RECORD_TYPES``."""
    what, dirs, _, how = GROUPS[module]
    messages, sources, notes = read_messages(src, module)
    base = baseline if isinstance(baseline, tuple) or baseline is None else baseline_types(baseline, module)
    git = src.manifest is None and not src.work_tree
    if git:
        commit, date = src.commit(), src.git_log("%ad")
        for name, (_, rel) in sources.items():
            notes[name] = (f"{src.repository}@{commit[:12]} (branch {src.branch}, {date}); the file last changed at "
                           + src.git_log("%h %ad: %s", rel))
    # older definitions of messages that changed incompatibly at the same version (KIP-932's share group records
    # changed between 4.0 and 4.1), or of record types the newest no longer define: records an older release
    # wrote decode with them. A manifest's input holds them under superseded/; from a bare git directory they
    # are the baseline's
    superseded: dict = {}
    superseded_types: dict = {}
    if src.manifest is not None:
        superseded_types = {int(t): tuple(p) for t, p in src.manifest.get("superseded_record_types", {}).get(
            module, {}).items()}
    for d in dirs:
        old = os.path.join("superseded", d)
        if src.manifest is not None and os.path.isdir(os.path.join(src.path, old)):
            for rel in src.list(old):
                m = json.loads(strip_comments(src.read(rel)))
                superseded[m["name"]] = [reduce_message(m)]
                sources[m["name"] + " (superseded)"] = src.file_source(rel)
                note = src.file_note(rel)
                if note is not None:
                    notes[m["name"] + " (superseded)"] = note
    if git and isinstance(baseline, Source) and all(baseline.has(d) for d in dirs):
        superseded, superseded_types, old_sources, old_notes = superseded_by_baseline(baseline, module, messages)
        sources.update(old_sources)
        notes.update(old_notes)
    provenance = []
    if src.manifest is not None or git:
        how_text = src.manifest.get("how", "") if src.manifest is not None else (
            f"Every definition read at {src.repository}@{commit[:12]} (branch {src.branch}, {date}), in "
            f"{src.read_in}; SUPERSEDED holds the baseline's definitions (BASELINE_COMMIT) that the newest do not "
            "read the same way, SUPERSEDED_RECORD_TYPES the baseline's record types the newest do not define the "
            "same: a record only they decode whole is decoded with them.")
        provenance = [
            "HOW = " + pprint.pformat(how_text, width=120),
            "",
            "SOURCES: dict[str, tuple[str, str]] = " + pprint.pformat(dict(sorted(sources.items())), width=120,
                                                                       sort_dicts=False),
            "",
            "# message -> where its definition was read and how it was established as the newest found",
            "PROVENANCE: dict[str, str] = " + pprint.pformat(dict(sorted(notes.items())), width=120, sort_dicts=False),
            "",
            "SUPERSEDED: dict[str, list[dict]] = " + pprint.pformat(dict(sorted(superseded.items())), width=120,
                                                                   sort_dicts=False),
            "",
        ]
        if superseded_types:
            provenance += [
                "# record type -> (key, value) of the baseline's definitions, where the newest define it otherwise "
                "or not at all",
                "SUPERSEDED_RECORD_TYPES: dict[int, tuple[str, str]] = " + pprint.pformat(
                    dict(sorted(superseded_types.items())), width=120, sort_dicts=False),
                "",
            ]
    body = [
        f'"""{what}: schema tables generated by tools/gen_schemas.py from Kafka\'s message definitions',
        f"({', '.join(dirs)}). Do not edit: regenerate.\"\"\"",
        "# flake8: noqa",
        "# fmt: off",
        f"KAFKA_COMMIT = {src.commit()!r}",
        "",
        *provenance,
        "MESSAGES: dict[str, dict] = " + pprint.pformat(messages, width=120, sort_dicts=False),
        "",
        "RECORD_TYPES: dict[int, tuple[str, str]] = " + pprint.pformat(record_types(messages, how), width=120, sort_dicts=False),
        "",
    ]
    if base is not None:
        body += [
            "# the record types of the baseline release's definitions (read by the generator at BASELINE_COMMIT)",
            f"BASELINE_COMMIT = {base[0]!r}",
            "BASELINE_RECORD_TYPES: frozenset[int] = frozenset(" + pprint.pformat(list(base[1]), width=110,
                                                                               compact=True) + ")",
            "",
        ]
    return "\n".join(body)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kafka", help="a Kafka checkout or bare git directory")
    ap.add_argument("--rev", default="HEAD", help="revision to read from a bare git directory")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--baseline", metavar="KAFKA[@REV]",
                    help="the release before the newest definitions (a checkout or bare git directory, at REV): "
                         "its coordinator record types are written as BASELINE_RECORD_TYPES")
    ap.add_argument("--repository", default="apache/kafka",
                    help="whose history a bare git directory holds (named in PROVENANCE)")
    ap.add_argument("--branch", default="?", help="the branch --rev is on (named in PROVENANCE)")
    ap.add_argument("--read-in", default="?", help="which copy of the repository was read (named in HOW)")
    args = ap.parse_args(argv)
    src = Source(args.kafka, args.rev, repository=args.repository, branch=args.branch, read_in=args.read_in)
    baseline = None
    if args.baseline:
        path, _, rev = args.baseline.partition("@")
        baseline = Source(path, rev or "HEAD", repository=args.repository)
    os.makedirs(args.out, exist_ok=True)
    for module in GROUPS:
        if not all(src.has(d) for d in GROUPS[module][1]):
            print(f"kept {module}: the input has no {', '.join(GROUPS[module][1])}", file=sys.stderr)
            continue
        path = os.path.join(args.out, f"{module}.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(generate(src, module, baseline))
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
