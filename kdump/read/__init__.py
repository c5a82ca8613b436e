"""The read layer: everything that turns paths into batches, below every command and the Spark source.

* :mod:`kdump.read.segment`: ``SegmentReader``, the one walker of a ``.log`` file's framing (batches, headers,
  resynchronising events, live files);
* :mod:`kdump.read.damage`: ``Damage``, the one description of a damaged area (byte range, cause, offsets lost), and
  ``readable``, what a reader that goes on past damage sees;
* :mod:`kdump.read.logdir`: Kafka's directory layout (file kinds, names, siblings, partitions, log directories);
* companion files, read (and encoded) one module per kind: :mod:`~kdump.read.offset_index`,
  :mod:`~kdump.read.time_index`, :mod:`~kdump.read.txn_index` (over :mod:`~kdump.read.index_base`),
  :mod:`~kdump.read.snapshot` (producer snapshots), :mod:`~kdump.read.checkpoints`;
* :mod:`kdump.read.producer_state`: the one producer and transaction state machine.

Nothing is imported here: a command loads only the modules it needs.
"""
