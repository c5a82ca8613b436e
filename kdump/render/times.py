"""How ``dump`` prints a timestamp (``--time-format``): Kafka's epoch milliseconds (the default, so that the
text stays Kafka's), UTC ISO-8601 with milliseconds and ``Z``, or local time with its UTC offset.

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
