"""``kdump index rebuild`` of several partition directories in worker processes (``--jobs``), as verify, index
check, stats, txn and dump spread theirs: through :func:`kdump.jobs.ordered_map`, largest first.

Apart from :mod:`kdump.index.rebuild` because each partition's existing files are compared with index check's
judgement (:class:`kdump.index.check.CompanionChecks`), and index check reads what rebuild computes."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from kdump.index.check import CompanionChecks
from kdump.index.rebuild import RebuildOutcome, rebuild_directory
from kdump.jobs import Work, ordered_map, path_work


def rebuild_directories(directories: Sequence[str] | Work[str], *, index_interval_bytes: int, force: bool,
                        jobs: int, progress: Callable[[int], None] | None = None
                        ) -> dict[str, list[RebuildOutcome] | Exception]:
    """Each partition directory of ``directories`` rebuilt next to its segments (:func:`rebuild_directory`,
    existing files checked as index check does), in up to ``jobs`` worker processes, the largest first: its
    outcomes, or the exception that stopped it (for the caller to handle as it would have been raised).
    ``progress(bytes)``: bytes of log recovered, from the workers as each segment is (a bar over a few large
    partitions would otherwise stand still until the end). The largest first by their segments' bytes
    (:func:`kdump.jobs.path_work`; ``directories`` may be that :class:`~kdump.jobs.Work` already, made once by
    the command for its progress bar)."""
    work = directories if isinstance(directories, Work) else path_work(directories)
    rebuilt = ordered_map(_rebuild_directory_or_error, [(d, index_interval_bytes, force) for d in work.units], jobs,
                          sizes=work.sizes, progress=progress)
    return dict(zip(work.units, rebuilt, strict=True))


def _rebuild_directory_or_error(directory: str, index_interval_bytes: int, force: bool, *,
                                progress=None) -> list[RebuildOutcome] | Exception:
    """A partition directory's outcomes, or the exception that stopped it (raised by the parent in its place);
    ``progress(n)`` as each segment is recovered (from a worker, as it goes)."""
    try:
        return rebuild_directory(directory, None, index_interval_bytes=index_interval_bytes, force=force,
                                 existing=CompanionChecks(), progress=progress)
    except Exception as e:
        return e
