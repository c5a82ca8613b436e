"""``__transaction_state`` replayed into each transactional id's state, as Kafka's transaction coordinator
loads it (``TransactionStateManager.loadTransactionMetadata`` with ``TransactionLog.readTxnRecordValue``).

Per transactional id the latest record wins; a tombstone removes the id. A value's partitions count only
when its state is not ``Empty`` (Kafka drops them there). A key of an unknown version, a value of an
unknown version or state, and bytes that do not decode are left out and listed.
"""
from __future__ import annotations

from dataclasses import dataclass

from kdump.decode.internal.base import RecordError
from kdump.decode.internal.coordinator import TRANSACTION_STATES, TRANSACTIONS, UnknownRecordType, read_record
from kdump.replay.source import Record, SkipList, Skipped, read_records, sources

TOPIC = "__transaction_state"


@dataclass
class TransactionalIdState:
    transactional_id: str
    version: int
    value: dict
    offset: int

    def to_json(self) -> dict:
        v = self.value
        partitions: dict[str, list[int]] = {}
        if self.state != "Empty":
            for p in v["transactionPartitions"] or ():
                ids = partitions.setdefault(p["topic"], [])
                ids.extend(i for i in p["partitionIds"] if i not in ids)  # a set in Kafka
        return {
            "transactionalId": self.transactional_id, "producerId": v["producerId"],
            "producerEpoch": v["producerEpoch"],
            # version 1 adds the producer ids of an epoch bump (-1 = none) and the client's transaction version
            "previousProducerId": v.get("previousProducerId", -1), "nextProducerId": v.get("nextProducerId", -1),
            "clientTransactionVersion": v.get("clientTransactionVersion", 0),
            "transactionTimeoutMs": v["transactionTimeoutMs"], "state": self.state,
            "partitions": [{"topic": t, "partitions": sorted(ids)} for t, ids in sorted(partitions.items())],
            "transactionLastUpdateTimestampMs": v["transactionLastUpdateTimestampMs"],
            "transactionStartTimestampMs": v["transactionStartTimestampMs"],
            "valueVersion": self.version, "recordOffset": self.offset}

    @property
    def state(self) -> str:
        return TRANSACTION_STATES[self.value["transactionStatus"]]


@dataclass
class TransactionsReplay:
    transactions: dict[str, TransactionalIdState]
    skipped: SkipList
    records: int

    def to_json(self) -> dict:
        return {"transactions": [t.to_json() for _, t in sorted(self.transactions.items())],
                "records": self.records, **self.skipped.to_json()}


def replay_transactions(paths, progress=None) -> TransactionsReplay:
    """Replay the ``__transaction_state`` partitions ``paths`` name (see :func:`kdump.replay.source.sources`);
    ``progress(bytes)`` as each batch is read."""
    state: dict[str, TransactionalIdState] = {}
    skipped = SkipList()
    count = 0
    for src in sources(paths, TOPIC):
        for path in src.logs:
            for rec in read_records(path, skipped, progress=progress):
                if rec.control:
                    continue
                count += 1
                _apply(state, rec, skipped)
    return TransactionsReplay(state, skipped, count)


def _apply(state: dict, rec: Record, skipped: SkipList) -> None:
    try:
        if rec.key is None:
            raise RecordError("the record has no key")
        _, _, key, _, version, value = read_record(TRANSACTIONS, rec.key, rec.value)
        if value is not None and not 0 <= value["transactionStatus"] < len(TRANSACTION_STATES):
            raise RecordError(f"Unknown transaction state id {value['transactionStatus']} from the transaction "
                              "status message")
    except UnknownRecordType as e:
        skipped.append(Skipped(rec.file, rec.offset, f"unknown key version {e.record_type}", "record-type-unknown",
                               rec.position))
        return
    except RecordError as e:
        skipped.append(Skipped(rec.file, rec.offset, str(e), position=rec.position))
        return
    tid = key["transactionalId"]
    if value is None:
        state.pop(tid, None)
    else:
        state[tid] = TransactionalIdState(tid, version, value, rec.offset)
