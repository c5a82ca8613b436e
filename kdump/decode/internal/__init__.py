"""Decoders of Kafka's internal topics: what DumpLogSegments' ``--offsets-decoder``,
``--transaction-log-decoder``, ``--cluster-metadata-decoder``, ``--share-group-state-decoder`` and
``--remote-log-metadata-decoder`` print, from schema tables generated from Kafka's message definitions
(:mod:`kdump.format.schemas`, read by :mod:`kdump.format.schema`).

A record decoder has ``decode(offset, key, value) -> Decoded`` (:class:`kdump.decode.internal.base.Decoded`:
the key and payload texts, the same as JSON-able objects, and the error if the record did not decode).
:func:`make_decoder` builds one by name; :func:`decoder_for_path` picks one from the partition directory
a segment sits in (``--decoder auto``).
"""
from __future__ import annotations

import os

from kdump.decode.internal.base import Decoded

__all__ = ["DECODER_NAMES", "record_decoder_for", "TOPIC_DECODERS", "Decoded", "make_decoder", "decoder_for_path"]

# decoder name -> the internal topic it is for
TOPIC_DECODERS = {
    "offsets": "__consumer_offsets",
    "transaction-log": "__transaction_state",
    "cluster-metadata": "__cluster_metadata",
    "share-group-state": "__share_group_state",
    "remote-log-metadata": "__remote_log_metadata",
}
DECODER_NAMES = tuple(TOPIC_DECODERS)
_BY_TOPIC = {topic: name for name, topic in TOPIC_DECODERS.items()}


def make_decoder(name: str, compat: str = "java"):
    """The record decoder called ``name`` (one of :data:`DECODER_NAMES`), in the newest (Java) tool's text
    or, with ``compat="scala"``, the Scala tool's (Kafka <= 3.9) where they differ."""
    from kdump.decode.internal import coordinator, metadata
    scala = compat == "scala"
    if name == "offsets":
        return coordinator.CoordinatorDecoder(
            coordinator.OFFSETS, missing_key="offset topic decoder" if scala else "the specified decoder")
    if name == "transaction-log":
        if scala:
            return coordinator.ScalaTransactionLogDecoder()
        return coordinator.CoordinatorDecoder(coordinator.TRANSACTIONS)
    if name == "share-group-state":
        return coordinator.CoordinatorDecoder(
            coordinator.SHARE_STATE, value_label="type" if scala else "version",
            missing_key="share group state topic decoder" if scala else "the specified decoder")
    if name == "cluster-metadata":
        return metadata.ClusterMetadataDecoder()
    if name == "remote-log-metadata":
        return metadata.RemoteLogMetadataDecoder()
    raise ValueError(f"unknown decoder {name!r}; choose one of {', '.join(DECODER_NAMES)}")


_made: dict = {}


def record_decoder_for(path: str, choice: str, compat: str = "java"):
    """The decoder for one file: ``choice`` names one, or is ``"auto"`` (the decoder of the internal topic
    whose partition directory holds ``path``; None for other topics)."""
    name = decoder_for_path(path) if choice == "auto" else choice
    if name is None:
        return None
    if (name, compat) not in _made:
        _made[name, compat] = make_decoder(name, compat)
    return _made[name, compat]


def topic_of(path: str) -> str | None:
    """The topic of the partition directory ``path`` (a segment or snapshot file) is in."""
    from kdump.read.logdir import topic_partition
    found = topic_partition(os.path.dirname(os.path.abspath(path)))
    return None if found is None else found[0]


def decoder_for_path(path: str) -> str | None:
    """The decoder name for a file in an internal topic's partition directory, else None."""
    return _BY_TOPIC.get(topic_of(path) or "")
