"""``kdump dump`` as a library: walk files and directories, decode batches, hand them to a renderer.

The walk is DumpLogSegments' (spec §1.2-§2.7); its modules, one idea each:

* :mod:`kdump.dump.options`: :class:`DumpOptions`, what a dump shows and how;
* :mod:`kdump.dump.plan`: which files a dump visits (:func:`entries_to_dump`, :func:`passed_over`);
* :mod:`kdump.dump.dumper`: :class:`Dumper`, the walk of files and their batches, to a renderer;
* :mod:`kdump.dump.window`: a seeking dump's window (which batches and records are shown);
* :mod:`kdump.dump.results`: what it found (:class:`FileResult`) and the non-consecutive offset report;
* :mod:`kdump.dump.workers`: ``--jobs``, partitions dumped in forked workers (:func:`dump_in_workers`).

The names below are the package's API.
"""
from kdump.dump.dumper import Dumper
from kdump.dump.options import DumpOptions
from kdump.dump.plan import entries_to_dump, passed_over
from kdump.dump.results import FileResult, non_consecutive_report
from kdump.dump.workers import dump_in_workers, dump_work

__all__ = ["DumpOptions", "Dumper", "FileResult", "dump_in_workers", "dump_work", "entries_to_dump",
           "non_consecutive_report", "passed_over"]
