"""The decode layer: turns record bytes into the objects every renderer receives.

Sits between ``kdump/format/`` (bytes and batches) and ``kdump/render/`` (text, JSON, rich, Arrow):

* :mod:`kdump.decode.records`: per record of a batch, the decoded object the renderers receive beside the
  :class:`~kdump.format.columns.RecordColumns` (the hook for key/value decoders of internal topics);
* :mod:`kdump.decode.control`: control records (transaction markers, KRaft control messages) as plain
  objects with their JSON and Kafka's text;
* :mod:`kdump.decode.payload`: how keys and values are printed (``string`` with Java's UTF-8
  substitution, ``hex``, ``base64``, ``json``, ``int32``, ``int64``, or a user decoder by import path).
"""
