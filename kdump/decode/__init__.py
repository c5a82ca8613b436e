"""The decode layer: turns record bytes into the objects every renderer receives.

Sits between ``kdump/format/`` (bytes and batches) and ``kdump/render/`` (text, JSON, rich, Arrow):

* :mod:`kdump.decode.payload`: how keys and values are printed (``string`` with Java's UTF-8
  substitution, ``hex``, ``base64``, ``json``, ``int32``, ``int64``, or a user decoder by import path).
"""
