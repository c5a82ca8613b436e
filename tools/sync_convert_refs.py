#!/usr/bin/env python3
"""Copy Kafka's conversion references (``*.to-magic-*``) from the shared corpus into fixtures/convert/.

Usage: python tools/sync_convert_refs.py [SHARED_CORPUS_DIR]   (default: ../shared/corpus)

The references are Kafka's own answer to "this segment in message format N" (see the corpus README,
section "Conversion references"). They are copied to the same relative paths under fixtures/convert/
as their source segments have under fixtures/corpus/ (copied by tools/sync_corpus.py), so that the
convert tests run on a fresh clone. PROVENANCE.md lists the source path and sha256 of every file.
"""
import sys
from pathlib import Path

from sync_corpus import ROOT, copy_selected, corpus_dir  # tools/ is on sys.path when run as a script

DEST = ROOT / "fixtures" / "convert"


def main(argv):
    copy_selected(
        corpus_dir(argv), DEST, lambda rel: ".to-magic-" in rel.name,
        "# fixtures/convert: Kafka's conversion references\n\n"
        "Copied by `python tools/sync_convert_refs.py` from `../shared/corpus/` (the shared reference\n"
        "corpus; its README, section \"Conversion references\", says how Kafka produced them: its real\n"
        "`RecordsUtil.downConvert` going down, `LogValidator`'s steps with `MemoryRecordsBuilder` going up,\n"
        "offsets kept; apache/kafka commit 1eb7644349cb). Each file sits at the relative path of its\n"
        "source segment, which is in fixtures/corpus/. Do not edit these files: regenerate them with the\n"
        "script.\n\n",
        "sync_convert_refs")


if __name__ == "__main__":
    main(sys.argv)
