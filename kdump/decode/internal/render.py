"""How a decoded internal-topic record fills the ``key``/``value`` members of a ``--format json`` record."""
from __future__ import annotations

import base64

from kdump.decode.internal.base import Decoded


def _raw(data) -> tuple[str | None, str | None]:
    return (None, None) if data is None else (base64.b64encode(bytes(data)).decode("ascii"), "base64")


def put_decoded(obj: dict, decoded: Decoded, key, value) -> None:
    """Decoded key and value as JSON objects (``keyEncoding``/``valueEncoding`` ``"decoded"``); a record that
    did not decode keeps its raw bytes (base64) and says why in ``decodeError``."""
    if decoded.error is not None:
        obj["key"], obj["keyEncoding"] = _raw(key)
        obj["value"], obj["valueEncoding"] = _raw(value)
        obj["decodeError"] = decoded.error
        return
    if decoded.key_obj is None:
        obj["key"], obj["keyEncoding"] = _raw(key)
    else:
        obj["key"], obj["keyEncoding"] = decoded.key_obj, "decoded"
    if decoded.value_obj is None:
        obj["value"], obj["valueEncoding"] = None, None  # a tombstone
    else:
        obj["value"], obj["valueEncoding"] = decoded.value_obj, "decoded"
