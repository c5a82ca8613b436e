"""``kdump convert``: rewrite a segment in another message format (magic 0, 1 or 2), the way Kafka converts.

>>> from kdump.convert import ConvertOptions, convert_segment          # doctest: +SKIP
>>> result = convert_segment("in/00000000000000000000.log", "out/00000000000000000000.log",
...                          ConvertOptions(to_magic=1))
>>> print(result.stats.losses.summary())
2 headers (on 1 record), 1 control batch (1 record: ...) dropped

Modules: :mod:`.engine` (the batch walk and re-encoding rules), :mod:`.losses` (what could not be
carried over), :mod:`.output` (verified atomic output, dry-run counter), :mod:`.proof` (what the read-back
proves of an output of plain magic 0/1 messages, and its indexes), :mod:`.files` (segments, directories, dry-run
size estimates). The rules and their Kafka sources are in docs/convert.md.
"""
from .engine import (
                     KAFKA_MESSAGE_MAX_BYTES,
                     ConversionRefused,
                     ConversionStats,
                     Converter,
                     ConvertOptions,
                     canonical_record,
                     convert_legacy_message,
                     legacy_entry,
)
from .files import (
                     DRY_RUN_CODECS,
                     ConversionResult,
                     IndexStatus,
                     SizeEstimate,
                     convert_directory,
                     convert_segment,
                     estimate_sizes,
                     output_path_for,
                     segments_in,
)
from .losses import KINDS as LOSS_KINDS
from .losses import Losses

__all__ = [
    "ConvertOptions", "ConversionRefused", "ConversionStats", "ConversionResult", "Converter", "IndexStatus",
    "Losses", "LOSS_KINDS", "SizeEstimate", "KAFKA_MESSAGE_MAX_BYTES", "DRY_RUN_CODECS",
    "convert_segment", "convert_directory", "estimate_sizes", "output_path_for", "segments_in",
    "convert_legacy_message", "legacy_entry", "canonical_record",
]
