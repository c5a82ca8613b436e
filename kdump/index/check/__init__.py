"""``kdump index check``: are a partition's companion files sound, and do they agree with its log?

One :class:`~kdump.report.findings.FileReport` per ``.index``, ``.timeindex``, ``.txnindex``, producer ``.snapshot``
and ``leader-epoch-checkpoint`` (plus one for an expected file that is missing, when that matters). Finding
codes are stable (docs/index.md lists them with their severities).

Shallow checks (``deep=False``) read the companion files whole and the log only where they point:

* layout and Kafka's own sanity checks (``OffsetIndex``/``TimeIndex``/``TransactionIndex.sanityCheck``,
  snapshot version and CRC, checkpoint syntax), with Kafka's messages;
* a preallocated zero tail (a segment that was not closed cleanly; normal for the active segment);
* offsets and positions increasing, timestamps increasing, offsets not below the base offset;
* each offset-index entry points at a batch (one 61-byte read) that starts at or before its offset; each
  time-index entry's offset is found where the offset index says (a header walk of at most one index
  interval); each aborted transaction's ABORT marker is in the log.

Deep checks (``deep=True``) also walk every segment, as Kafka's recovery would: entries must lie on the
chain of batches, each time entry must be the maximum timestamp so far at its offset (with the record
timestamps decoded, as DumpLogSegments compares them), the ``.txnindex`` must equal the aborted
transactions recomputed from the log (producer state carried across segments), the leader epoch checkpoint
must agree with the epochs in the batches, and indexes are compared with what recovery would write (an
``info`` finding: append-time and recovery-time indexing legitimately differ, see docs/index.md).

The checks, one module per file kind: :mod:`.offset_index` (``.index``), :mod:`.time_index` (``.timeindex``),
:mod:`.txn_index` (``.txnindex``), :mod:`.snapshot` (producer ``.snapshot``), :mod:`.checkpoints`
(``leader-epoch-checkpoint``; by syntax, a log directory's offset checkpoints and ``partition.metadata``), with
what the two fixed-entry indexes share in :mod:`.entries`. Each check is handed the partition it runs in as a
:class:`~kdump.index.check.context.Context` and reports through :class:`~kdump.index.check.report.Report`.
:mod:`.partition` finds a partition's files and hands each to its kind's check; :mod:`.paths` is what the command
checks for each path it is given (the walk of directories, ``--jobs``).
"""
from __future__ import annotations

from kdump.index.check.checkpoints import check_text_checkpoint
from kdump.index.check.entries import MAX_CHECK_ENTRIES
from kdump.index.check.partition import CompanionChecks, PartitionChecker
from kdump.index.check.paths import (
    check_partition_companions,
    check_paths,
    check_segment_companions,
    check_work,
)

__all__ = ["MAX_CHECK_ENTRIES", "CompanionChecks", "PartitionChecker", "check_partition_companions", "check_paths",
           "check_segment_companions", "check_text_checkpoint", "check_work"]
