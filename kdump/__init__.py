"""kdump: read, check, repair and convert Apache Kafka log segments without a broker.

The library API (the command line is a thin layer over it)::

    from kdump import SegmentReader
    with SegmentReader("00000000000000000000.log") as reader:
        for batch in reader:                      # RecordBatch (magic 2) or LegacyBatch (magic 0/1)
            for record in batch.records(limit=64 << 20):
                ...
        print(reader.tail)                         # what lies after the last whole batch
"""
from kdump.errors import FormatError, KdumpError
from kdump.format.legacy import LegacyBatch, LegacyMessage, LegacyRecord
from kdump.format.types import CompressionType, ControlRecordType, TimestampType
from kdump.format.v2 import Record, RecordBatch, RecordColumns
from kdump.segment import SegmentReader, Tail, iter_batches
from kdump.writer import LegacyMessageBuilder, RecordBatchBuilder, SegmentWriter, write_segment

__version__ = "0.1.0"

__all__ = [
    "FormatError", "KdumpError", "LegacyBatch", "LegacyMessage", "LegacyRecord", "CompressionType",
    "ControlRecordType", "TimestampType", "Record", "RecordBatch", "RecordColumns", "SegmentReader",
    "Tail", "iter_batches", "__version__", "RecordBatchBuilder", "LegacyMessageBuilder", "SegmentWriter",
    "write_segment",
]
