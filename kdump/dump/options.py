"""What a dump shows and how: :class:`DumpOptions`, the one value a :class:`kdump.dump.Dumper` is run with."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_DECOMPRESSED_BYTES

if TYPE_CHECKING:
    from kdump.decode.filters import RecordFilter


@dataclass
class DumpOptions:
    deep_iteration: bool = False
    print_data: bool = False
    skip_record_metadata: bool = False
    max_bytes: int | None = None
    compat: str = "java"  # "java" (newest Kafka) or "scala" (Kafka 2.x-3.9)
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
    # companion files (kdump.index.dump)
    verify_index_only: bool = False
    index_sanity_check: bool = False
    companions: bool = False  # directory dumps include index, snapshot and checkpoint files
    # seeking (kdump.read.locate): batches whose last offset >= from_offset, or from the first batch whose max
    # timestamp >= from_time; up to the last batch starting at or before to_offset
    from_offset: int | None = None
    to_offset: int | None = None
    from_time: int | None = None
    to_time: int | None = None  # up to the last batch starting at or before it
    # internal-topic decoders (kdump.decode.internal): a decoder name, "auto" (by partition directory) or None
    record_decoder: str | None = None
    # which batches and records are shown (kdump.decode.filters.RecordFilter), None: all
    filters: RecordFilter | None = None
    time_format: str = "epoch"  # how renderers print timestamps (kdump.text.times)

    @property
    def seeking(self) -> bool:
        return (self.from_offset is not None or self.from_time is not None or self.to_offset is not None
                or self.to_time is not None)

    @property
    def deep(self) -> bool:
        return self.deep_iteration or self.print_data or (self.filters is not None and self.filters.record_level)
