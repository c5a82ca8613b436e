"""kdump: read, check, repair and convert Apache Kafka log segments without a broker.

The library API (the command line is a thin layer over it)::

    from kdump import SegmentReader
    with SegmentReader("00000000000000000000.log") as reader:
        for batch in reader:                      # RecordBatch (magic 2) or LegacyBatch (magic 0/1)
            for record in batch.records(limit=64 << 20):
                ...
        print(reader.tail)                         # what lies after the last whole batch

Names are imported on first use (PEP 562), so that ``kdump`` on the command line starts quickly.
"""
import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "FormatError": "kdump.errors", "KdumpError": "kdump.errors",
    "LegacyBatch": "kdump.format.legacy", "LegacyMessage": "kdump.format.legacy", "Batch": "kdump.format.batch",
    "CompressionType": "kdump.format.types", "ControlRecordType": "kdump.format.types",
    "TimestampType": "kdump.format.types",
    "Record": "kdump.format.columns", "RecordBatch": "kdump.format.v2", "RecordColumns": "kdump.format.columns",
    "SegmentReader": "kdump.read.segment", "Stop": "kdump.format.framing", "iter_batches": "kdump.read.segment",
    "RecordBatchBuilder": "kdump.format.v2_builder", "LegacyMessageBuilder": "kdump.format.legacy_builder",
    "SegmentWriter": "kdump.write.segment",
    "write_segment": "kdump.write.segment",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kdump' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
