"""The Java ``toString()`` of the objects Kafka's ``RemoteLogMetadataSerde`` builds from ``__remote_log_metadata``
records (RemoteLogSegmentMetadata, ...Update, RemotePartitionDeleteMetadata, ...Snapshot), as
DumpLogSegments' ``--remote-log-metadata-decoder`` prints them."""
from __future__ import annotations

from kdump.decode.jackson import uuid_text

SEGMENT_STATES = ("COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED", "DELETE_SEGMENT_FINISHED")
PARTITION_DELETE_STATES = ("DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED")


def _state(states, i: int) -> str:
    return states[i] if 0 <= i < len(states) else "null"  # forId gives null for an unknown id


def _topic_id_partition(t: dict) -> str:
    return f"{uuid_text(t['id'])}:{t['name']}-{t['partition']}"


def _segment_id(s: dict) -> str:
    return (f"RemoteLogSegmentId{{topicIdPartition={_topic_id_partition(s['topicIdPartition'])}, "
            f"id={uuid_text(s['id'])}}}")


def _custom(data) -> str:
    return "Optional.empty" if data is None else f"Optional[CustomMetadata{{{len(data)} bytes}}]"


def _epochs(entries) -> str:
    epochs = {}
    for e in entries:
        epochs[e["leaderEpoch"]] = e["offset"]
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(epochs.items())) + "}"


def _txn_index_empty(r: dict) -> str:
    """KAFKA-16780's tagged TxnIndexEmpty (tag 0, false when absent), which the objects' toString ends with since
    Kafka 4.0 (RemoteLogSegmentMetadata and ...Snapshot of apache/kafka@449e528b60d1)."""
    return f"txnIdxEmpty={'true' if r.get('txnIndexEmpty') else 'false'}"


def to_string(name: str, r: dict) -> str:
    if name == "RemoteLogSegmentMetadataRecord":
        return (f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(r['remoteLogSegmentId'])}, "
                f"startOffset={r['startOffset']}, endOffset={r['endOffset']}, brokerId={r['brokerId']}, "
                f"maxTimestampMs={r['maxTimestampMs']}, eventTimestampMs={r['eventTimestampMs']}, "
                f"segmentLeaderEpochs={_epochs(r['segmentLeaderEpochs'])}, "
                f"segmentSizeInBytes={r['segmentSizeInBytes']}, customMetadata={_custom(r['customMetadata'])}, "
                f"state={_state(SEGMENT_STATES, r['remoteLogSegmentState'])}, {_txn_index_empty(r)}}}")
    if name == "RemoteLogSegmentMetadataUpdateRecord":
        return (f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_segment_id(r['remoteLogSegmentId'])}, "
                f"customMetadata={_custom(r['customMetadata'])}, "
                f"state={_state(SEGMENT_STATES, r['remoteLogSegmentState'])}, "
                f"eventTimestampMs={r['eventTimestampMs']}, brokerId={r['brokerId']}}}")
    if name == "RemotePartitionDeleteMetadataRecord":
        return (f"RemotePartitionDeleteMetadata{{topicPartition={_topic_id_partition(r['topicIdPartition'])}, "
                f"state={_state(PARTITION_DELETE_STATES, r['remotePartitionDeleteState'])}, "
                f"eventTimestampMs={r['eventTimestampMs']}, brokerId={r['brokerId']}}}")
    # RemoteLogSegmentMetadataSnapshotRecord
    return (f"RemoteLogSegmentMetadataSnapshot{{segmentId={uuid_text(r['segmentId'])}, "
            f"startOffset={r['startOffset']}, endOffset={r['endOffset']}, maxTimestampMs={r['maxTimestampMs']}, "
            f"segmentLeaderEpochs={_epochs(r['segmentLeaderEpochs'])}, segmentSizeInBytes={r['segmentSizeInBytes']}, "
            f"customMetadata={_custom(r['customMetadata'])}, "
            f"state={_state(SEGMENT_STATES, r['remoteLogSegmentState'])}, {_txn_index_empty(r)}}}")
