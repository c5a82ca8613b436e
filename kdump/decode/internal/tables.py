"""The generated schema tables compiled into :class:`kdump.format.schema.Struct` objects, once, on first use."""
from __future__ import annotations

import importlib
from functools import cache

from kdump.format.schema import Struct, compile_message

GROUPS = ("group_coordinator", "transaction_coordinator", "share_coordinator", "metadata", "remote_log_metadata",
          "raft_control")


def module(group: str):
    return importlib.import_module(f"kdump.format.schemas.{group}")


def has(group: str, name: str) -> bool:
    """Whether the newest definitions of a group hold message ``name`` (else only :func:`superseded` may)."""
    return name in module(group).MESSAGES


@cache
def schema(group: str, name: str) -> Struct:
    """The compiled schema of message ``name`` of a group's table."""
    return compile_message(module(group).MESSAGES[name])


@cache
def superseded(group: str, name: str) -> tuple[Struct, ...]:
    """Older definitions of message ``name`` at the same versions (changed incompatibly since, or no longer
    defined: a record an older release wrote decodes with one of them), newest first."""
    return tuple(compile_message(m) for m in getattr(module(group), "SUPERSEDED", {}).get(name, ()))


def superseded_record_types(group: str) -> dict:
    """Record type -> (key message, value message) of an older release's definitions, where the newest define the
    type otherwise or not at all (``SUPERSEDED_RECORD_TYPES`` of the table)."""
    return getattr(module(group), "SUPERSEDED_RECORD_TYPES", {})


def record_types(group: str) -> dict:
    """Record type (or apiKey) -> (key message, value message) or (message, Kafka's record type name)."""
    return module(group).RECORD_TYPES


def baseline_record_types(group: str) -> frozenset[int]:
    """The record types of a coordinator group at the release before the newest definitions (``--baseline`` of
    tools/gen_schemas.py); every type of the table where the generator was given no baseline."""
    table = module(group)
    return frozenset(getattr(table, "BASELINE_RECORD_TYPES", table.RECORD_TYPES))
