"""The columns ``keyJson``/``valueJson`` (the key or value decoded, as compact JSON text, ready for Spark's
``from_json``) and ``keySchemaId``/``valueSchemaId`` (the schema id its framing names) that the
``keyDecoder``/``valueDecoder`` option ``schema-registry`` adds (docs/schema-registry.md).

They are made on the executors from the key or value column of each Arrow batch; each task builds the
decoder once per process from the schemas the driver found (:func:`kdump.spark.options.schemas_path`). A key
or value that does not decode gives a null JSON column (and its id, when it is framed), as Spark's
``from_json`` gives null for text it cannot parse.
"""
from __future__ import annotations

import pyarrow as pa

from kdump.decode.errors import DecoderError
from kdump.spark.schema import DECODED_COLUMNS, DECODED_FROM


def decoded_arrays(arrays: dict, names, schemas: str | None) -> dict:
    """``names`` (decoded columns) built from the ``key``/``value`` arrays in ``arrays``."""
    from kdump.decode.schema_registry import registry_decoder

    decoder = registry_decoder(schemas)
    out = {}
    for side in ("key", "value"):
        wanted = [n for n in names if DECODED_FROM[n] == side]
        if not wanted:
            continue
        texts: list[str | None] = []
        ids: list[int | None] = []
        for data in arrays[side].to_pylist():
            text = sid = None
            if data is not None:
                try:
                    text, sid = decoder.decode_with_id(data)
                except DecoderError:
                    sid = decoder.schema_id(data)
            texts.append(text)
            ids.append(sid)
        for name in wanted:
            values = texts if name.endswith("Json") else ids
            out[name] = pa.array(values, DECODED_COLUMNS[name])
    return out
