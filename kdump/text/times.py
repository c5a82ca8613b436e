"""How kdump prints a timestamp (``--time-format``, every command): Kafka's epoch milliseconds (the default of
Kafka's text, so that it stays Kafka's), UTC ISO-8601 with milliseconds and ``Z``, or local time with its UTC
offset. JSON keeps the epoch milliseconds and adds the chosen form beside them (:func:`add_formatted`).

A timestamp that names no time (Kafka's -1, NO_TIMESTAMP) or lies outside what a calendar date can hold
stays epoch milliseconds whatever the format, so nothing is hidden or invented.
"""
from __future__ import annotations

import datetime as _dt

TIME_FORMATS = ("epoch", "iso", "local")

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


def _epoch(ms: int) -> str:
    return str(ms)


def _when(ms: int) -> _dt.datetime | None:
    if ms < 0:
        return None  # NO_TIMESTAMP (-1) and other negative values: no time of day
    try:
        return _EPOCH + _dt.timedelta(milliseconds=ms)
    except OverflowError:  # beyond year 9999
        return None


def iso_utc(ms: int) -> str:
    """``2023-11-14T22:13:20.000Z``."""
    when = _when(ms)
    if when is None:
        return str(ms)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def iso_local(ms: int) -> str:
    """``2023-11-14T23:13:20.000+01:00``: the local time zone (``TZ``) of this machine at that instant."""
    when = _when(ms)
    if when is None:
        return str(ms)
    try:
        return when.astimezone().isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):  # the platform's local-time conversion cannot reach it
        return str(ms)


def time_formatter(name: str):
    """The function that prints a timestamp (epoch ms int -> str) for a ``--time-format`` name."""
    try:
        return {"epoch": _epoch, "iso": iso_utc, "local": iso_local}[name]
    except KeyError:
        raise ValueError(f"unknown time format {name!r}: one of {', '.join(TIME_FORMATS)}") from None


# The JSON members that hold epoch milliseconds, in every command's documents. Beside each, with a non-epoch
# --time-format, the same instant in that form under :func:`formatted_key` (the epoch ms stay, unchanged).
TIMESTAMP_KEYS = frozenset({
    "timestamp", "maxTimestamp", "lastTimestamp",  # dump, companion files
    "startTime", "endTime", "newestTimestamp",  # txn
    "minTimestamp",  # stats (and maxTimestamp)
    "commitTimestamp", "expireTimestamp", "currentStateTimestamp",  # groups
    "transactionStartTimestampMs", "transactionLastUpdateTimestampMs",  # txn-state
    "issueTimestamp", "expirationTimestamp",  # metadata (delegation tokens)
})


def formatted_key(key: str) -> str:
    """Where a timestamp's formatted form goes: ``maxTimestamp`` -> ``maxTimestampIso`` (as dump's JSON has it),
    ``transactionStartTimestampMs`` -> ``transactionStartTimestampIso``, ``minTimestamp`` -> ``minTimestampIso``."""
    if "_" in key:
        return f"{key}_iso"
    return f"{key.removesuffix('Ms')}Iso"


def add_formatted(doc, when) -> None:
    """Beside every integer member of ``doc`` (dicts and lists, walked) named in :data:`TIMESTAMP_KEYS`, its
    formatted form (``when``: a :func:`time_formatter`); in place. Nothing when ``when`` is None (epoch)."""
    if when is None:
        return
    if isinstance(doc, list):
        for item in doc:
            add_formatted(item, when)
    elif isinstance(doc, dict):
        for key, value in list(doc.items()):
            if key in TIMESTAMP_KEYS and isinstance(value, int) and not isinstance(value, bool):
                doc[formatted_key(key)] = when(value)
            elif isinstance(value, dict | list):
                add_formatted(value, when)


def json_formatter(name: str):
    """For JSON: None for ``epoch`` (the documents stay as they are), else the formatter of ``name``."""
    return None if name == "epoch" else time_formatter(name)
