#!/usr/bin/env python3
"""Copy Kafka's conversion references (``*.to-magic-*``) from the shared corpus into fixtures/convert/.

Usage: python tools/sync_convert_refs.py [SHARED_CORPUS_DIR]   (default: ../shared/corpus)

The references are Kafka's own answer to "this segment in message format N" (see the corpus README,
section "Conversion references"). They are copied to the same relative paths under fixtures/convert/
as their source segments have under fixtures/corpus/ (copied by tools/sync_corpus.py), so that the
convert tests run on a fresh clone. PROVENANCE.md lists the source path and sha256 of every file.
"""
import hashlib
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "fixtures" / "convert"


def main(argv):
    src = Path(argv[1]) if len(argv) > 1 else ROOT.parent / "shared" / "corpus"
    if not src.is_dir():
        sys.exit(f"no corpus at {src}")
    if DEST.exists():
        shutil.rmtree(DEST)
    rows = []
    for path in sorted(src.rglob("*")):
        if not path.is_file() or ".to-magic-" not in path.name:
            continue
        rel = path.relative_to(src)
        out = DEST / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out)
        rows.append((str(rel), hashlib.sha256(path.read_bytes()).hexdigest()))
    with open(DEST / "PROVENANCE.md", "w") as f:
        f.write("# fixtures/convert: Kafka's conversion references\n\n")
        f.write("Copied by `python tools/sync_convert_refs.py` from `../shared/corpus/` (the shared reference\n"
                "corpus; its README, section \"Conversion references\", says how Kafka produced them: its real\n"
                "`RecordsUtil.downConvert` going down, `LogValidator`'s steps with `MemoryRecordsBuilder` going up,\n"
                "offsets kept; apache/kafka commit 1eb7644349cb). Each file sits at the relative path of its\n"
                "source segment, which is in fixtures/corpus/. Do not edit these files: regenerate them with the\n"
                "script.\n\n")
        f.write("| file | sha256 |\n|---|---|\n")
        for rel, digest in rows:
            f.write(f"| {rel} | {digest} |\n")
    print(f"copied {len(rows)} files into {DEST.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv)
