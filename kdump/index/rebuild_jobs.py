"""``kdump index rebuild`` of several partition directories in worker processes (``--jobs``), as verify, index
check, stats, txn and dump spread theirs: through :func:`kdump.jobs.ordered_map`, largest first.

Apart from :mod:`kdump.index.rebuild` because each partition's existing files are compared with index check's
judgement (:class:`kdump.index.check.CompanionChecks`), and index check reads what rebuild computes."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from kdump.index.check import CompanionChecks
from kdump.index.rebuild import RebuildOutcome, rebuild_directory
from kdump.jobs import ordered_map
from kdump.read.scan import as_scan


def rebuild_directories(directories: Sequence[str], *, index_interval_bytes: int, force: bool, jobs: int,
                        progress: Callable[[int], None] | None = None
                        ) -> dict[str, list[RebuildOutcome] | Exception]:
    """Each partition directory of ``directories`` rebuilt next to its segments (:func:`rebuild_directory`,
    existing files checked as index check does), in up to ``jobs`` worker processes, the largest first: its
    outcomes, or the exception that stopped it (for the caller to handle as it would have been raised).
    ``progress(bytes)``: bytes of log recovered, from the workers as each segment is (a bar over a few large
    partitions would otherwise stand still until the end). The largest first by their files' bytes, as
    :meth:`kdump.read.scan.Scan.total_bytes` counts them."""
    sizes = [as_scan([d]).total_bytes() for d in directories]
    rebuilt = ordered_map(_rebuild_directory_or_error, [(d, index_interval_bytes, force) for d in directories], jobs,
                          sizes=sizes, progress=progress)
    return dict(zip(directories, rebuilt, strict=True))


def _rebuild_directory_or_error(directory: str, index_interval_bytes: int, force: bool, *,
                                progress=None) -> list[RebuildOutcome] | Exception:
    """A partition directory's outcomes, or the exception that stopped it (raised by the parent in its place);
    ``progress(n)`` as each segment is recovered (from a worker, as it goes)."""
    try:
        return rebuild_directory(directory, None, index_interval_bytes=index_interval_bytes, force=force,
                                 existing=CompanionChecks(), progress=progress)
    except Exception as e:
        return e
