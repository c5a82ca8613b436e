"""Counted nouns in text for people: one helper, so that every report says "1 file" and "2 files" alike."""
from __future__ import annotations

# Nouns whose plural is not the noun and an "s" (the last word is the one counted: "source batch").
_PLURALS = {"batch": "batches", "entry": "entries", "index": "indexes", "match": "matches", "copy": "copies"}


def plural(noun: str, n: int) -> str:
    """``noun`` for ``n`` of it: "batch" for 1, "batches" for 0 and 2."""
    if n == 1:
        return noun
    head, _, last = noun.rpartition(" ")
    many = _PLURALS.get(last) or (last[:-1] + "ies" if last.endswith("y") and last[-2:-1] not in "aeiou"
                                  else last + "s")
    return f"{head} {many}" if head else many


def count(n: int, noun: str, *, grouped: bool = False) -> str:
    """``n`` and ``noun`` in agreement: "1 batch", "2 batches"; ``grouped``: the number with thousands separators
    ("1,024 records")."""
    return f"{n:,} {plural(noun, n)}" if grouped else f"{n} {plural(noun, n)}"
