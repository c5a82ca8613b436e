"""The data source's options (strings, case-insensitive keys, as Spark passes them) turned into values."""
from __future__ import annotations

import json
import logging
import os
from typing import overload

from kdump.spark.arrow import ReadOptions
from kdump.spark.remote import absolute
from kdump.spark.schema import DECODED_COLUMNS, default_columns


class OptionError(ValueError):
    pass


_logger = logging.getLogger("kdump.spark")
_SAID: set[str] = set()


def warn_once(notes) -> None:
    """Log each of a read's notes (options accepted and ignored) once in this process: the planner may build a
    read's reader more than once."""
    for note in notes:
        if note not in _SAID:
            _SAID.add(note)
            _logger.warning("kdump: %s", note)


def flag(options, name: str, default: bool = False) -> bool:
    value = options.get(name)
    if value is None:
        return default
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise OptionError(f"option {name}={value!r}: expected true or false")


@overload
def integer(options, name: str, default: int, minimum: int = 0) -> int: ...
@overload
def integer(options, name: str, default: None, minimum: int = 0) -> int | None: ...
def integer(options, name: str, default: int | None, minimum: int = 0) -> int | None:
    value = options.get(name)
    if value is None:
        return default
    try:
        n = int(str(value).strip())
    except ValueError:
        raise OptionError(f"option {name}={value!r}: expected a whole number") from None
    if n < minimum:
        raise OptionError(f"option {name}={value!r}: must be at least {minimum}")
    return n


def choice(options, name: str, choices: tuple, default: str) -> str:
    value = options.get(name)
    if value is None:
        return default
    text = str(value).strip()
    for c in choices:
        if text.lower() == c.lower():
            return c
    raise OptionError(f"option {name}={value!r}: expected one of {', '.join(choices)}")


def paths(options) -> list[str]:
    """``load(path)`` gives ``path``; ``load([a, b])`` gives ``paths`` as a JSON list."""
    out = []
    if options.get("paths"):
        try:
            out.extend(json.loads(options["paths"]))
        except ValueError:
            raise OptionError(f"option paths={options['paths']!r}: expected a JSON list") from None
    if options.get("path"):
        out.append(options["path"])
    if not out:
        raise OptionError("kafka-log needs a path: spark.read.format('kafka-log').load(PATH or [PATHS])")
    try:
        return [absolute(p) for p in out]
    except ValueError as e:
        raise OptionError(str(e)) from None


def storage_options(options) -> dict:
    return {k[3:]: v for k, v in options.items() if k.lower().startswith("fs.")}


def default_column_names(options) -> list[str]:
    from kdump.spark.kafka_options import include_headers  # Spark's option, read as strictly as Spark reads it
    names = default_columns(include_headers(options), flag(options, "includeMetadata"))
    for side in ("key", "value"):  # keyDecoder/valueDecoder add their decoded columns (kdump.spark.decoded)
        if decoder(options, f"{side}Decoder") is not None:
            names += [c for c in DECODED_COLUMNS if c.startswith(side)]
    return names


DECODERS = ("schema-registry",)


def decoder(options, name: str) -> str | None:
    """``keyDecoder``/``valueDecoder``: ``schema-registry`` (or ``string``/absent: none)."""
    value = options.get(name)
    if value is None or str(value).strip().lower() in ("", "none", "string"):
        return None
    return choice(options, name, DECODERS, DECODERS[0])


def schemas_path(options, columns=()) -> str | None:
    """Where the decoders find schemas: the ``schemas`` option, else the _schemas partition beside the paths
    (found on the driver, so that every task is handed the same place); None when no decoder is asked for (by
    keyDecoder/valueDecoder, or by a decoded column in a schema given to the reader)."""
    if options.get("schemas"):
        return str(options["schemas"])
    if (decoder(options, "keyDecoder") is None and decoder(options, "valueDecoder") is None
            and not any(c in DECODED_COLUMNS for c in columns)):
        return None
    from kdump.decode.schema_registry.sources import find_storage
    found = find_storage(p for p in paths(options) if "://" not in p)
    if found is None:
        raise OptionError("keyDecoder/valueDecoder schema-registry: no _schemas partition beside the paths; give "
                          "the option schemas (a _schemas partition, schema files or a saved GET /schemas answer)")
    return found


def read_options(options, columns, kafka) -> ReadOptions:
    """The reader's options; ``kafka`` (:class:`kdump.spark.kafka_options.KafkaRead`) says whether damage fails
    the read (failOnDataLoss, or kdump's ``mode``)."""
    return ReadOptions(
        columns=tuple(columns),
        include_control=flag(options, "includeControl"),
        failfast=kafka.fail_on_data_loss,
        check_crcs=flag(options, "checkCrcs", True),
        # Spark turns each Arrow batch into rows; smaller batches keep that in cache (bench/RESULTS.md)
        max_rows=integer(options, "maxRecordsPerArrowBatch", 1 << 14, 1),
        max_bytes=integer(options, "maxBytesPerArrowBatch", 64 << 20, 1024),
        isolation=choice(options, "isolationLevel", ("read_uncommitted", "read_committed"), "read_uncommitted"),
        backend=choice(options, "backend", ("auto", "compiled", "python"), "auto"),
        storage_options=storage_options(options),
        schemas=schemas_path(options, columns),
    )


def parallelism(options) -> int:
    return integer(options, "parallelism", os.cpu_count() or 1, 1)


def apply_kafka_isolation(read: ReadOptions, options, kafka) -> None:
    """``kafka.isolation.level`` (Spark's Kafka-source spelling) sets the isolation level, unless
    ``isolationLevel`` says otherwise (then the two disagree, and the read is refused)."""
    if kafka.isolation is None:
        return
    given = options.get("isolationLevel")
    if given is not None and str(given).strip() != kafka.isolation:
        raise OptionError(f"isolationLevel={given!r} and kafka.isolation.level={kafka.isolation!r} disagree: "
                          "give one of them")
    read.isolation = kafka.isolation
