"""The read layer: everything that turns paths into batches, below every command and the Spark source.

* :mod:`kdump.read.segment`: ``SegmentReader``, the one walker of a ``.log`` file's framing (batches, headers,
  resynchronising events, live files);
* :mod:`kdump.read.damage`: ``Damage``, the one description of a damaged area (byte range, cause, offsets lost), and
  ``readable``, what a reader that goes on past damage sees;
* :mod:`kdump.read.logdir`: Kafka's directory layout (file kinds, names, siblings, one directory's listing);
* :mod:`kdump.read.scan`: paths to partitions, segments and work units, the one walk every command shares;
* companion files, read (and encoded) one module per kind: :mod:`~kdump.read.offset_index`,
  :mod:`~kdump.read.time_index`, :mod:`~kdump.read.txn_index` (over :mod:`~kdump.read.index_base`),
  :mod:`~kdump.read.snapshot` (producer snapshots), :mod:`~kdump.read.checkpoints`;
* :mod:`kdump.read.producer_state`: the one producer and transaction state machine;
* :mod:`kdump.read.locate`: the batch at an offset or a time (through the indexes when they can be trusted).

Nothing is imported here: a command loads only the modules it needs.
"""
