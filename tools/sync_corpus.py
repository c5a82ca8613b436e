#!/usr/bin/env python3
"""Copy the shared reference corpus into fixtures/corpus/ so that a fresh clone tests on its own.

Usage: python tools/sync_corpus.py [SHARED_CORPUS_DIR]   (default: ../shared/corpus)

Copies every file except the conversion references (``*.to-magic-*``, used by the convert tests, which
copy them separately) and records a PROVENANCE.md with the source path and sha256 of each file.
"""
import hashlib
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "fixtures" / "corpus"


def copy_selected(src: Path, dest: Path, select, provenance_header: str, script: str) -> int:
    """Copy the files of ``src`` for which ``select(relative_path)`` holds into ``dest`` (replacing it),
    at the same relative paths, and write ``dest/PROVENANCE.md`` with the sha256 of each. Returns the count."""
    if dest.exists():
        shutil.rmtree(dest)
    rows = []
    for path in sorted(src.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(src)
        if not select(rel):
            continue
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out)
        rows.append((str(rel), hashlib.sha256(path.read_bytes()).hexdigest()))
    dest.mkdir(parents=True, exist_ok=True)
    with open(dest / "PROVENANCE.md", "w") as f:
        f.write(provenance_header)
        f.write("| file | sha256 |\n|---|---|\n")
        for rel, digest in rows:
            f.write(f"| {rel} | {digest} |\n")
    print(f"{script}: copied {len(rows)} files into {dest.relative_to(ROOT)}")
    return len(rows)


def corpus_dir(argv) -> Path:
    src = Path(argv[1]) if len(argv) > 1 else ROOT.parent / "shared" / "corpus"
    if not src.is_dir():
        sys.exit(f"no corpus at {src}")
    return src


def main(argv):
    copy_selected(
        corpus_dir(argv), DEST,
        lambda rel: ".to-magic-" not in rel.name and rel.parts[0] != "java-utf8",
        "# fixtures/corpus: copied from the shared reference corpus\n\n"
        "Copied by `python tools/sync_corpus.py` from `../shared/corpus/` (real Kafka files and files\n"
        "written by Kafka's own code, with Kafka's own answers; see README.md here and, for the\n"
        "broker-written files, broker-written/PROVENANCE.md). Conversion references (`*.to-magic-*`)\n"
        "are not copied here. Do not edit these files: regenerate them with the script.\n\n",
        "sync_corpus")


if __name__ == "__main__":
    main(sys.argv)
