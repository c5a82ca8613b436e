"""Checks of the text checkpoints: a partition's ``leader-epoch-checkpoint`` (syntax, epochs increasing, against the
log end offset; deep: against the leader epochs of the batches) and, by syntax, a log directory's offset
checkpoints (replication, recovery point, log start, cleaner offsets) and a partition's ``partition.metadata``."""
from __future__ import annotations

import os

from kdump.index.check.context import Context
from kdump.index.check.report import Report
from kdump.read import checkpoints as cps
from kdump.report.findings import FileReport


def check_leader_epoch_checkpoint(ctx: Context, path: str) -> FileReport:
    r = Report(path, "leader-epoch-checkpoint", log_damage=ctx.partition_damage)
    try:
        r.report.bytes = os.path.getsize(path)
        cp = cps.parse_any(path, kind="leader-epoch-checkpoint")
    except (OSError, ValueError) as e:
        r.report.io_error = f"cannot read: {getattr(e, 'strerror', None) or e}"
        return r.report
    for p in cp.problems:
        r.add(p.code, (f"line {p.line}: " if p.line else "") + p.message, position=p.position)
    prev = None
    for (epoch, start), (line, pos) in zip(cp.entries, cp.entry_lines, strict=True):
        if epoch < 0 or start < 0:
            r.add("leader-epoch-negative", f"line {line}: epoch {epoch} start offset {start}: negative",
                  position=pos)
        if prev is not None and (epoch <= prev[0] or start < prev[1]):
            r.add("leader-epoch-not-increasing",
                  f"line {line}: epoch {epoch} from offset {start} does not follow epoch {prev[0]} from offset "
                  f"{prev[1]} (epochs must increase, start offsets must not decrease)", position=pos)
        prev = (epoch, start)
    if not ctx.segments:
        return r.finish()
    end = ctx.log_end_offset()
    for (epoch, start), (line, pos) in zip(cp.entries, cp.entry_lines, strict=True):
        if end is not None and start > end:
            r.add("leader-epoch-beyond-log-end",
                  f"line {line}: epoch {epoch} starts at offset {start}, above the log end offset {end}",
                  position=pos)
    if ctx.deep and not cp.problems:
        bases = sorted(ctx.segments)
        facts = ctx.recover(ctx.segments[bases[0]])
        in_file = dict(cp.entries)
        for epoch, start in facts.leader_epochs:
            if start < bases[0]:
                continue
            if epoch not in in_file:
                r.add("leader-epoch-missing",
                      f"the log has batches of leader epoch {epoch} from offset {start}, which the checkpoint does "
                      "not list", first_offset=start)
            elif in_file[epoch] != start and in_file[epoch] >= bases[0]:
                r.add("leader-epoch-differs",
                      f"epoch {epoch}: the checkpoint says it starts at offset {in_file[epoch]}, "
                      f"its first batch in the log is at offset {start}", first_offset=start,
                      damage_offset=in_file[epoch])
    return r.finish()


def check_text_checkpoint(path: str) -> FileReport:
    """Syntax of a log-directory checkpoint (replication/recovery-point/log-start/cleaner offsets) or a
    partition.metadata file."""
    kind = cps.kind_of(path) or "offset-checkpoint"
    r = Report(path, kind)
    try:
        r.report.bytes = os.path.getsize(path)
        cp = cps.parse_any(path)
    except (OSError, ValueError) as e:
        r.report.io_error = f"cannot read: {getattr(e, 'strerror', None) or e}"
        return r.report
    for p in cp.problems:
        r.add(p.code, (f"line {p.line}: " if p.line else "") + p.message, position=p.position)
    if cp.kind == "offset-checkpoint":
        seen = set()
        for (topic, part, off), (line, pos) in zip(cp.entries, cp.entry_lines, strict=True):
            if (topic, part) in seen:
                r.add("checkpoint-duplicate", f"line {line}: {topic}-{part} is listed twice", position=pos)
            seen.add((topic, part))
            if part < 0 or off < 0:
                r.add("checkpoint-negative", f"line {line}: {topic} {part} {off}: negative partition or offset",
                      position=pos)
    return r.finish()
