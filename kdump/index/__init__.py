"""Index, snapshot and checkpoint files of a Kafka log directory (docs/index.md).

* the readers (and encoders) of each file kind live in the read layer, :mod:`kdump.read`;
* :mod:`kdump.index.dump`: DumpLogSegments' text for them (``kdump dump``);
* :mod:`kdump.index.check`: findings about them (``kdump index check``;
  ``check_partition_companions(directory, *, deep)`` for ``kdump verify``);
* :mod:`kdump.index.rebuild`: Kafka's recovery-time indexes (``kdump index rebuild``;
  ``rebuild_indexes(log_path, out_dir=None, *, index_interval_bytes=4096, force=False)``);
* offset and time lookups (``kdump dump --from-offset/--from-time``) are the read layer's, :mod:`kdump.read.locate`.

Nothing is imported here: ``kdump dump`` loads only the modules it needs.
"""
