"""Coordinator records: ``__consumer_offsets``, ``__transaction_state`` and ``__share_group_state`` (spec §7.2-7.5).

Key = int16 record type + key message (read at version = record type); value = int16 version + value
message; a null value is a tombstone (``<DELETE>``). Printed as DumpLogSegments' message parsers print
them: key ``{"type":"<t>","data":{...}}``, value ``{"version":"<v>","data":{...}}`` (the Scala tool's
share-group-state parser wrote ``"type"`` for the value too), ``Unknown record type <t> at offset <o>,
skipping.`` and ``Error at offset <o>, skipping. <reason>`` with Kafka's ``CoordinatorRecordSerde`` texts.
In ``group metadata`` values of ``consumer`` groups, each member's subscription and assignment bytes are
decoded as the embedded consumer protocol (and kept as base64 when they do not decode).
"""
from __future__ import annotations

from kdump.decode.internal import tables
from kdump.decode.internal.base import INT16, Decoded, RecordError, leftovers, reason
from kdump.decode.jackson import jackson, to_tree
from kdump.format.schema import Reader, SchemaError, Struct, read_struct, read_struct_from

OFFSETS = "group_coordinator"
TRANSACTIONS = "transaction_coordinator"
SHARE_STATE = "share_coordinator"
# bytes after a key or value message, kept beside its fields as UNKNOWN_TAGS keeps unknown tagged fields (the
# converters, which walk the schema's fields, leave it out)
TRAILING = "_trailingBytes"
# the older definition (``tables.superseded``) a message was read with, when not the newest: its JSON follows it
DEFINITION = "_definition"


# the record types Kafka 4.0 (the release before the tables' newest definitions) knew, as the generator read them
# from that release's definitions (BASELINE_RECORD_TYPES of each table): a record of a newer type that does not
# decode with its definition is most likely no record of that type, and is named as 4.0's tool names it ("Unknown
# record type"), the decode error kept in ``UnknownRecordType.detail``
KNOWN_IN_4_0 = {group: tables.baseline_record_types(group) for group in (OFFSETS, TRANSACTIONS, SHARE_STATE)}


def key_version(schema: Struct, rtype: int) -> int:
    """The version a key is read at: its record type, or 0 for the ``coordinator-key`` definitions (Kafka 4.1+),
    whose fields are version 0 and whose record type is their ``apiKey``."""
    return 0 if schema.extra.get("type") == "coordinator-key" else rtype


class UnknownRecordType(Exception):
    """``detail``: for a record type newer than Kafka 4.0 that does not decode with its definition, why."""

    def __init__(self, record_type: int, detail: str | None = None):
        super().__init__(record_type)
        self.record_type = record_type
        self.detail = detail


def read_record(group: str, key: bytes, value: bytes | None):
    """(record type, key message name, key object, value message name, value version or None, value object
    or None) of one coordinator record, as Kafka's ``CoordinatorRecordSerde.deserialize`` reads it. A record type
    an older release defined otherwise (``tables.superseded_record_types``: ``__consumer_offsets`` type 0 with
    offset-commit values v1-v3, type 9 of Kafka 4.0's share groups) is read with that definition where the newest
    do not read it whole and it does: the record was written by that release."""
    if len(key) < 2:
        raise RecordError("Could not read version from key's buffer.")
    (rtype,) = INT16.unpack_from(key, 0)
    types = tables.record_types(group)
    older = tables.superseded_record_types(group).get(rtype)
    if rtype not in types and older is None:
        raise UnknownRecordType(rtype)
    newest = None
    failed: RecordError | UnknownRecordType | None = None
    if rtype in types:
        try:
            newest = _read_pair(group, rtype, types[rtype], key, value)
        except RecordError as e:
            if rtype not in KNOWN_IN_4_0.get(group, (rtype,)):
                failed = UnknownRecordType(rtype, f"as {types[rtype][0][:-3]}: {e}")
            else:
                failed = e
        if older is None or (newest is not None and _whole(group, newest)):
            if failed is not None:
                raise failed from None
            return newest
    assert older is not None  # a type without one is returned or raised above
    try:
        old = _read_pair(group, rtype, older, key, value)
    except RecordError:
        old = None
    if old is not None and _whole(group, old):
        return old
    if newest is not None:
        return newest
    if failed is not None:
        raise failed from None
    raise UnknownRecordType(rtype)


def _read_pair(group: str, rtype: int, names: tuple[str, str], key: bytes, value: bytes | None):
    key_name, value_name = names
    # Kafka's error text names the record type as the version, whatever version the key's fields are read at
    key_obj = _read(group, key_name, key, key_version(_newest(group, key_name), rtype), "key", said=rtype)
    if value is None:
        return rtype, key_name, key_obj, value_name, None, None
    if len(value) < 2:
        raise RecordError("Could not read version from value's buffer.")
    (version,) = INT16.unpack_from(value, 0)
    return rtype, key_name, key_obj, value_name, version, _read(group, value_name, value, version, "value")


def _whole(group: str, record: tuple) -> bool:
    """Whether a read record's definitions explain all of it: nothing after the key or value, and a value version
    its definition has."""
    _, _, key_obj, value_name, version, value_obj = record
    if TRAILING in key_obj or (value_obj is not None and TRAILING in value_obj):
        return False
    if version is None or value_obj is None:
        return True
    lo, hi = definition(group, value_name, value_obj).versions
    return lo <= version <= hi


def _newest(group: str, name: str) -> Struct:
    """The newest definition of a message: the table's, or for a message only an older release defined (a record
    type since dropped), the newest of those."""
    return tables.schema(group, name) if tables.has(group, name) else tables.superseded(group, name)[0]


def _read(group: str, name: str, buf: bytes, version: int, which: str, said: int | None = None) -> dict:
    """The message (Kafka reads it and ignores what follows; kdump keeps what follows under TRAILING). Where the
    newest definition leaves bytes or fails and an older one of the same version (``tables.superseded``) reads
    the message whole, the record was written by the older release: it is read with that one."""
    newest = _newest(group, name)
    try:
        obj, rest = _read_with(newest, buf, version)
    except SchemaError as e:
        failed: SchemaError | None = e
        obj, rest = {}, b""
    else:
        failed = None
    if not tables.has(group, name):
        obj[DEFINITION] = newest
    if failed is not None or rest:
        for older in tables.superseded(group, name):
            if older is newest:
                continue
            try:
                old_obj, old_rest = _read_with(older, buf, version)
            except SchemaError:
                continue
            if not old_rest:
                old_obj[DEFINITION] = older
                return old_obj
    if failed is not None:
        raise RecordError(f"Could not read record with version {version if said is None else said} from {which}'s "
                          "buffer due to: "
                          f"{reason(failed)}.") from None
    if rest:
        obj[TRAILING] = rest
    return obj


def definition(group: str, name: str, obj: dict) -> Struct:
    """The definition message ``obj`` was read with (:func:`read_record`): the newest, or the older one it needed."""
    return obj.get(DEFINITION) or tables.schema(group, name)


def _read_with(schema: Struct, buf: bytes, version: int) -> tuple[dict, bytes]:
    r = Reader(buf, 2)
    obj = read_struct_from(r, schema, version)
    return obj, bytes(buf[r.pos:])


def _embedded(name: str, data) -> object:
    """An embedded consumer-protocol message (int16 version + body) as JSON, or the base64 text Kafka keeps
    when it does not decode."""
    if data is None or len(data) < 2:
        return None
    (version,) = INT16.unpack_from(data, 0)
    try:
        obj = read_struct(data, tables.schema("raft_control", name), version, exact=False, pos=2)
    except SchemaError:
        return None
    return to_tree(obj, tables.schema("raft_control", name), version)


def group_metadata_tree(obj: dict, version: int) -> dict:
    """GroupMetadataValue as the offsets decoder prints it (OffsetsMessageParser.prepareGroupMetadataValue)."""
    tree = to_tree(obj, tables.schema(OFFSETS, "GroupMetadataValue"), version)
    if tree.get("protocolType") == "consumer":
        for member, raw in zip(tree.get("members") or (), obj.get("members") or (), strict=False):
            for field, message in (("subscription", "ConsumerProtocolSubscription"),
                                   ("assignment", "ConsumerProtocolAssignment")):
                if field in member:
                    decoded = _embedded(message, raw.get(field))
                    if decoded is not None:
                        member[field] = decoded
    return tree


class CoordinatorDecoder:
    """The offsets, transaction-log (newest Kafka) and share-group-state decoders."""

    def __init__(self, group: str, *, value_label: str = "version", missing_key: str = "the specified decoder"):
        self.group = group
        self.value_label = value_label
        self.missing_key = missing_key

    def decode(self, offset: int, key, value) -> Decoded:
        if key is None:
            # Kafka's tool stops the whole dump here; kdump reports the record and goes on.
            msg = (f"Failed to decode message at offset {offset} using {self.missing_key} "
                   "(message had a missing key)")
            return Decoded(f"Error at offset {offset}, skipping. {msg}", None, error=msg)
        try:
            rtype, key_name, key_obj, value_name, version, value_obj = read_record(
                self.group, bytes(key), None if value is None else bytes(value))
        except UnknownRecordType as e:
            msg = f"Unknown record type {e.record_type} at offset {offset}, skipping."
            return Decoded(msg, None, error=msg if e.detail is None else f"{msg} ({e.detail})")
        except RecordError as e:
            return Decoded(f"Error at offset {offset}, skipping. {e}", None, error=str(e))
        key_tree = {"type": str(rtype), "data": to_tree(key_obj, definition(self.group, key_name, key_obj), rtype)}
        said = leftovers(key_tree, key_obj, key_name, key_obj.get(TRAILING, b""))
        if version is None:
            return Decoded(jackson(key_tree), "<DELETE>", key_tree, None, leftover=_words(said))
        value_schema = definition(self.group, value_name, value_obj)
        if value_name == "GroupMetadataValue":
            data = group_metadata_tree(value_obj, version)
        else:
            data = to_tree(value_obj, value_schema, version)
        value_tree: dict[str, object] = {self.value_label: str(version), "data": data}
        said += leftovers(value_tree, value_obj, value_name, value_obj.get(TRAILING, b""))
        lo, hi = value_schema.versions
        if not lo <= version <= hi:
            # Kafka reads it with the fields of the versions it knows: what it prints may be wrong
            value_tree["unknownVersion"] = True
            said.append(f"{value_name} version {version} is not one of the definitions' ({lo}-{hi})")
        return Decoded(jackson(key_tree), jackson(value_tree), key_tree, value_tree, leftover=_words(said))


def _words(said: list[str]) -> str | None:
    return "; ".join(said) if said else None


# transactionStatus ids (TransactionMetadata.scala / TransactionState.java)
TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
                      "PrepareEpochFence")


class ScalaTransactionLogDecoder:
    """The Scala tool's transaction-log text (``TransactionLog.formatRecordKeyAndValue``, Kafka <= 3.9)."""

    def decode(self, offset: int, key, value) -> Decoded:
        try:
            return self._decode(key, value)
        except (RecordError, UnknownRecordType) as e:  # the Scala tool died here
            msg = str(e)
            return Decoded(f"Error at offset {offset}, skipping. {msg}", None, error=msg)

    def _decode(self, key, value) -> Decoded:
        if key is None or len(key) < 2:
            raise RecordError("Could not read version from key's buffer.")
        (kv,) = INT16.unpack_from(key, 0)
        if kv != 0:
            text = f"unknown::version={kv}"
            return Decoded(text, None, {"unknownKeyVersion": kv}, None)
        key_obj = _read(TRANSACTIONS, "TransactionLogKey", bytes(key), kv, "key")
        # the Scala tool read the key and ignored what followed; kdump shows it as the Java text does (never silent)
        key_tree = {k: v for k, v in key_obj.items() if k != TRAILING}
        said = leftovers(key_tree, key_obj, "TransactionLogKey", key_obj.get(TRAILING, b""))
        key_text = _marked(f"transaction_metadata::transactionalId={key_obj['transactionalId']}", key_tree)
        if value is None:
            return Decoded(key_text, "<DELETE>", key_tree, None, leftover=_words(said))
        if len(value) < 2:
            raise RecordError("Could not read version from value's buffer.")
        (vv,) = INT16.unpack_from(value, 0)
        schema = tables.schema(TRANSACTIONS, "TransactionLogValue")
        if not schema.versions[0] <= vv <= schema.versions[1]:
            raise RecordError(f"Unknown version {vv} from the transaction log message value")
        obj = _read(TRANSACTIONS, "TransactionLogValue", bytes(value), vv, "value")
        status = obj["transactionStatus"]
        if not 0 <= status < len(TRANSACTION_STATES):
            raise RecordError(f"Unknown transaction state id {status} from the transaction status message")
        state = TRANSACTION_STATES[status]
        partitions: list[str] = []
        if state != "Empty":
            for p in obj["transactionPartitions"] or ():
                partitions.extend(f"{p['topic']}-{i}" for i in p["partitionIds"])
            partitions = list(dict.fromkeys(partitions))  # a set in Kafka
        text = (f"producerId:{obj['producerId']},producerEpoch:{obj['producerEpoch']},state={state},"
                f"partitions=[{','.join(partitions)}],txnLastUpdateTimestamp={obj['transactionLastUpdateTimestampMs']},"
                f"txnTimeoutMs={obj['transactionTimeoutMs']}")
        value_tree = to_tree(obj, schema, vv)
        said += leftovers(value_tree, obj, "TransactionLogValue", obj.get(TRAILING, b""))
        return Decoded(key_text, _marked(text, value_tree), key_tree, value_tree, leftover=_words(said))


def _marked(text: str, tree: dict) -> str:
    """The Scala tool's text of a key or value with what its definition does not explain after it (the Java text
    carries the same under these names in its JSON)."""
    marks = []
    if "unknownTaggedFields" in tree:
        marks.append("unknownTaggedFields=" + ",".join(f"{t['field'] or '.'}:{t['tag']}:{t['data']}"
                                                        for t in tree["unknownTaggedFields"]))
    if "trailingBytes" in tree:
        marks.append(f"trailingBytes={tree['trailingBytes']}")
    return text + "".join(f" [{m}]" for m in marks)
