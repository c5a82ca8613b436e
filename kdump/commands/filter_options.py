"""The batch and record filters of ``kdump dump`` (:mod:`kdump.decode.filters`) as Click options.

``header_filter_options`` are the filters read from a batch's header alone; ``deep_filter_options`` four of
them on ``kdump verify``, where they choose the batches ``--deep`` decodes; ``record_filter_options`` the ones
on decoded keys, values and headers (``dump`` only).
"""
from __future__ import annotations

import click

from kdump.format.names import CODEC_IDS, CODEC_NAMES

_HEADER_FILTERS = ("producer_id", "transactional", "control_only", "codec", "magic")
_RECORD_FILTERS = ("key", "key_match", "value_match", "header_filters")


def header_filter_options(command):
    """``--producer-id``, ``--transactional/--no-transactional``, ``--control-only``, ``--codec``, ``--magic``."""
    options = [
        click.option("--producer-id", type=int, default=None, metavar="N",
                     help="Only batches of this producer id (-1: batches of no idempotent producer)."),
        click.option("--transactional/--no-transactional", default=None,
                     help="Only transactional batches / only non-transactional ones."),
        click.option("--control-only", is_flag=True,
                     help="Only control batches (transaction markers, KRaft control records)."),
        click.option("--codec", type=click.Choice(CODEC_NAMES), default=None,
                     help="Only batches compressed with this codec."),
        click.option("--magic", type=click.IntRange(0, 2), default=None, metavar="0|1|2",
                     help="Only batches (message sets) of this magic."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


_DEEP_ONLY = (" With --deep, only these batches have their records decompressed and checked; the framing, CRC, "
              "header, offset, producer epoch/sequence and leader epoch checks still run on every batch.")


def deep_filter_options(command):
    """``kdump verify``'s choice of the batches whose records ``--deep`` checks: ``--producer-id``,
    ``--transactional/--no-transactional``, ``--codec``, ``--magic`` (read by :func:`build_filter`)."""
    options = [
        click.option("--producer-id", type=int, default=None, metavar="N",
                     help="Batches of this producer id (-1: of no idempotent producer)." + _DEEP_ONLY),
        click.option("--transactional/--no-transactional", default=None,
                     help="Transactional batches / non-transactional ones." + _DEEP_ONLY),
        click.option("--codec", type=click.Choice(CODEC_NAMES), default=None,
                     help="Batches compressed with this codec." + _DEEP_ONLY),
        click.option("--magic", type=click.IntRange(0, 2), default=None, metavar="0|1|2",
                     help="Batches (message sets) of this magic." + _DEEP_ONLY),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def record_filter_options(command):
    """``--key``, ``--key-match``, ``--value-match``, ``--header``."""
    options = [
        click.option("--key", default=None, metavar="K",
                     help="Only records whose key, decoded (--key-decoder; Java's UTF-8 by default), is exactly K."),
        click.option("--key-match", default=None, metavar="REGEX",
                     help="Only records whose decoded key contains a match of this Python regular expression "
                          "(re.search: anywhere in the key; anchor with ^ and $)."),
        click.option("--value-match", default=None, metavar="REGEX",
                     help="Only records whose decoded value (--value-decoder) contains a match of this regular "
                          "expression (a plain word is a substring search)."),
        click.option("--header", "header_filters", multiple=True, metavar="KEY[=VALUE]",
                     help="Only records with a header KEY (with =VALUE: whose value, decoded by --header-decoder, "
                          "is exactly VALUE). Repeat for several headers, all required."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def build_filter(kwargs: dict, key_decoder=None, value_decoder=None, header_decoder=None):
    """Pops the filter options from a command's keyword arguments; a :class:`kdump.decode.filters.RecordFilter`, or
    None when no filter was given. Raises click.BadParameter for a regular expression that does not compile."""
    given = {name: kwargs.pop(name) for name in _HEADER_FILTERS + _RECORD_FILTERS if name in kwargs}
    if given.get("control_only") is False:
        del given["control_only"]  # a flag's default; --no-transactional (False) is a filter
    if not any(v is not None and v != () for v in given.values()):
        return None
    from kdump.decode.filters import RecordFilter, compile_pattern, parse_header_filter  # only with a filter: start-up
    patterns = {}
    for name in ("key_match", "value_match"):
        if given.get(name) is not None:
            flag = "--" + name.replace("_", "-")
            try:
                patterns[name] = compile_pattern(given[name], flag)
            except ValueError as e:
                raise click.BadParameter(str(e), param_hint=flag) from None
    codec = given.get("codec")
    return RecordFilter(
        producer_id=given.get("producer_id"), transactional=given.get("transactional"),
        control_only=bool(given.get("control_only")),
        codec_id=None if codec is None else CODEC_IDS[codec], magic=given.get("magic"),
        key=given.get("key"), key_match=patterns.get("key_match"), value_match=patterns.get("value_match"),
        headers=tuple(parse_header_filter(h) for h in given.get("header_filters", ())),
        key_decoder=key_decoder, value_decoder=value_decoder, header_decoder=header_decoder)
