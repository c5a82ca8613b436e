"""``kdump replicas``' report: the JSON document (``partitions``, with the lost records as ``dump``'s JSON writes
a record's key and value) and the text for people (a table per partition). The library
(:mod:`kdump.replicas`) hands over the comparisons; only this module words them."""
from __future__ import annotations

from collections.abc import Callable

from kdump.render.jsonl import put_data
from kdump.replicas import REFERENCE, PartitionReplicas, Replica


def document(found, results: list[PartitionReplicas], errors: list[dict]) -> dict:
    """The JSON document: ``partitions`` (each compared), ``unmatched`` (partitions held by one path only),
    ``errors``."""
    parts = []
    for r in results:
        doc = r.to_dict()
        for loss_doc, loss in zip(doc["divergence"], r.divergence.values(), strict=True):
            if loss.listed or loss.not_listed:
                loss_doc["lost"] = [_record(rec) for rec in loss.listed]
                loss_doc["lostNotListed"] = loss.not_listed
        parts.append(doc)
    return {"partitions": parts, "unmatched": [{"path": d, "source": s} for d, s in found.alone],
            "errors": errors}


def _record(rec) -> dict:
    obj = {"offset": rec.offset, "timestamp": rec.timestamp}
    put_data(obj, rec.key, rec.value)
    return obj


def _epochs(rep: Replica) -> str:
    return " ".join(f"{e}@{s}" for e, s in rep.epochs) or "-"


def _opt(value) -> str:
    return "-" if value is None else str(value)


def text_lines(found, results: list[PartitionReplicas], say: Callable[[str], None]) -> None:
    """A table per partition: each replica's offsets, epochs, soundness, verdict and what truncation would cost
    it; then the mismatches and the notes."""
    for r in results:
        ref = r.replicas[r.reference]
        say(f"{r.key}: {r.status.upper()}; reference {ref.path} (leader epoch {ref.latest_epoch}, log end "
            f"{ref.log_end_offset})")
        rows = [("REPLICA", "START", "END", "HW", "RECOVERY", "EPOCHS", "SOUND", "STATUS", "TRUNCATE AT", "LOSES")]
        for rep in r.replicas:
            loss = r.divergence.get(rep.path)
            if loss is None:
                at, loses = "-", "-"
            else:
                at = str(loss.offset)
                spans = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in loss.ranges)
                loses = f"{loss.records} records ({spans})" if loss.records else "nothing"
                if loss.acknowledged:
                    loses += f", {loss.acknowledged} below its high watermark (acknowledged)"
            rows.append((rep.path, str(rep.log_start_offset), str(rep.log_end_offset), _opt(rep.high_watermark),
                         _opt(rep.recovery_point), _epochs(rep), "yes" if rep.sound else f"no ({rep.damage_count})",
                         r.verdicts.get(rep.path, REFERENCE), at, loses))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
        for row in rows:
            say("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1])
        for loss in r.divergence.values():
            for step in loss.steps if loss.records else ():  # (how Kafka's fetcher gets there, where it costs)
                say(f"  {loss.replica}: {step}")
            for rec in loss.listed:
                key = "null" if rec.key is None else rec.key.decode("utf-8", "replace")
                value = "null" if rec.value is None else rec.value.decode("utf-8", "replace")
                say(f"    lost offset {rec.offset}: key {key} value {value}")
            if loss.not_listed:
                say(f"    ... and {loss.not_listed} more lost records")
        for m in r.mismatches:
            span = f"{m.offset}-{m.last_offset}" if m.last_offset != m.offset else str(m.offset)
            for what in m.differences:
                say(f"  MISMATCH at {span}: {what}")
        if r.mismatch_count > len(r.mismatches):
            say(f"  ... and {r.mismatch_count - len(r.mismatches)} more mismatches")
        for rep in r.replicas:
            for d in rep.damage:
                where = "" if d.get("position") is None else f" at byte {d['position']}"
                say(f"  DAMAGE {d.get('path')}{where}: {d.get('description') or d.get('message')}")
            for note in rep.notes:
                say(f"  note: {rep.path}: {note}")
        for note in r.notes:
            say(f"  note: {note}")
    for directory, source in found.alone:
        say(f"{directory}: held by {source} only, nothing to compare it with")
