"""File names of Kafka's text checkpoints (no imports beyond the standard library: the dump path reads these)."""

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
OFFSET_CHECKPOINTS = {
    "replication-offset-checkpoint": "high watermark per partition",
    "recovery-point-offset-checkpoint": "recovery point per partition (offset up to which the log was flushed)",
    "log-start-offset-checkpoint": "log start offset per partition",
    "cleaner-offset-checkpoint": "log cleaner checkpoint per partition (first offset not yet cleaned)",
}
PARTITION_METADATA = "partition.metadata"
TEXT_CHECKPOINT_NAMES = frozenset([LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA, *OFFSET_CHECKPOINTS])
