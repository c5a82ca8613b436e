"""Decoders: how record keys and values are turned into text for printing.

Kafka's DumpLogSegments prints keys and payloads through a ``Decoder`` class
(``--key-decoder-class`` / ``--value-decoder-class``); the default is
``StringDecoder``, i.e. Java's ``new String(bytes, UTF_8)``.  This module
provides the same thing for kdump:

* :func:`java_utf8` (from :mod:`kdump.format.text`) -- byte-for-byte Java's UTF-8 decoding, including how it
  substitutes U+FFFD for invalid input, so ``--print-data-log`` output equals
  Kafka's even for binary payloads.
* Built-in decoders by short name (:data:`BUILTIN_DECODERS`): ``string``,
  ``hex``, ``base64``, ``json``, ``int32``, ``int64``.
* Kafka's own decoder class names as aliases of those (users paste them from
  Kafka scripts), see :data:`KAFKA_DECODER_ALIASES`.
* User decoders loaded by Python import path, see :func:`load_decoder`.

A decoder is any object with a ``name`` (str) and a ``decode(bytes) -> str``
method (:class:`Decoder`).  Decoders only ever see non-null data: Kafka does
not call the decoder for a null key or value, and neither should callers.

Errors are reported with two exception types so that a CLI can show them
without a traceback:

* :class:`DecoderLoadError` (a ``ValueError``) -- a decoder spec could not be
  resolved; it is a usage error.
* :class:`DecoderError` -- a decoder failed on particular bytes (too short for
  ``int32``, not JSON, or any exception raised by a user decoder).
"""

from __future__ import annotations

import base64
import importlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kdump.decode.errors import DecoderError, DecoderLoadError
from kdump.format.text import java_utf8

__all__ = [
    "BUILTIN_DECODERS",
    "KAFKA_DECODER_ALIASES",
    "Decoder",
    "DecoderError",
    "DecoderLoadError",
    "BuiltinDecoder",
    "SCHEMA_REGISTRY",
    "UserDecoder",
    "decoder_names",
    "java_utf8",
    "load_decoder",
    "printed",
    "printed_column",
]


@runtime_checkable
class Decoder(Protocol):
    """What every decoder provides."""

    @property
    def name(self) -> str: ...  # a property, so that frozen dataclasses (read-only fields) qualify

    def decode(self, data: bytes) -> str: ...


# ---------------------------------------------------------------------------
# Built-in decoders
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BuiltinDecoder:
    """A decoder shipped with kdump: a name, a function and a help line."""

    name: str
    decode: Callable[[bytes], str] = field(repr=False)
    description: str = field(default="", compare=False)


def _hex(data: bytes) -> str:
    return data.hex()


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN, Infinity and -Infinity, which are not JSON
    # (RFC 8259); a payload containing them is not valid JSON for anyone else.
    raise ValueError(f"{name} is not a JSON value")


# A JSON string escape such as "\ud800" without its pair parses to a lone
# surrogate, which json.dumps(ensure_ascii=False) would emit raw and which can
# then not be written to a UTF-8 stdout.  Surrogates can only occur inside JSON
# strings, so escaping them again keeps the output valid JSON and faithful.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _json(data: bytes) -> str:
    text = java_utf8(data)
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:  # JSONDecodeError, int digit limit, NaN/Infinity
        raise DecoderError(f"not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise DecoderError("not decodable as JSON: nested too deeply") from exc
    try:
        out = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    except (ValueError, RecursionError) as exc:  # e.g. int too long to print
        raise DecoderError(f"cannot print JSON: {exc}") from exc
    if _SURROGATE.search(out):
        out = _SURROGATE.sub(_escape_surrogate, out)
    return out


def _make_int_decoder(name: str, size: int) -> Callable[[bytes], str]:
    def decode(data: bytes) -> str:
        # Kafka's IntegerDecoder/LongDecoder read the first 4/8 bytes with
        # ByteBuffer.getInt/getLong (big-endian, signed) and ignore the rest;
        # on shorter data they die with BufferUnderflowException, which we
        # turn into a message a user can act on.
        if len(data) < size:
            raise DecoderError(f"{name} decoder needs {size} bytes, got {len(data)}")
        return str(int.from_bytes(data[:size], "big", signed=True))

    decode.__name__ = f"_{name}"
    return decode


#: Built-in decoders by name, in the order help text should list them.
BUILTIN_DECODERS: dict[str, BuiltinDecoder] = {
    d.name: d
    for d in (
        BuiltinDecoder("string", java_utf8, "UTF-8 text as Java decodes it (Kafka's default)"),
        BuiltinDecoder("hex", _hex, "lowercase hexadecimal"),
        BuiltinDecoder("base64", _base64, "standard base64 with padding"),
        BuiltinDecoder("json", _json, "JSON, printed compact (error if not JSON)"),
        BuiltinDecoder("int32", _make_int_decoder("int32", 4), "first 4 bytes, big-endian signed"),
        BuiltinDecoder("int64", _make_int_decoder("int64", 8), "first 8 bytes, big-endian signed"),
    )
}

_KAFKA_PACKAGES = ("org.apache.kafka.tools.api", "kafka.serializer")

#: Kafka decoder class names -> built-in decoder name.  Kafka's DefaultDecoder
#: returns the raw byte[] and DumpLogSegments prints its Java toString(),
#: "[B@<identity hash>", which carries no information and changes from run to
#: run; hex is the closest useful rendering of "the bytes as they are".
KAFKA_DECODER_ALIASES: dict[str, str] = {
    f"{package}.{cls}": builtin
    for package in _KAFKA_PACKAGES
    for cls, builtin in (
        ("StringDecoder", "string"),
        ("IntegerDecoder", "int32"),
        ("LongDecoder", "int64"),
        ("DefaultDecoder", "hex"),
    )
}


#: The decoder that needs the data's surroundings: the schemas of a Schema Registry (load_decoder's ``schemas``).
SCHEMA_REGISTRY = "schema-registry"


def printed(decoder: Decoder, data: bytes) -> str:
    """What a dump prints for non-null ``data``: the decoder's text, or ``<reason>`` when it refuses the bytes
    (the record is printed and the dump goes on)."""
    try:
        return decoder.decode(data)
    except DecoderError as e:
        return f"<{e}>"


def printed_column(decoder: Decoder, buf, positions: list[int], lengths: list[int]) -> list[str | None]:
    """:func:`printed` of each key or value of a chunk of records (``buf[positions[i]:positions[i] +
    lengths[i]]``; None for a null, length -1). A decoder with a ``texts`` method (the Schema Registry's)
    decodes the column at once; others record by record."""
    texts = getattr(decoder, "texts", None)
    if texts is None:
        return [None if n < 0 else printed(decoder, bytes(buf[p:p + n]))
                for p, n in zip(positions, lengths, strict=True)]
    return [f"<{t}>" if isinstance(t, DecoderError) else t for t in texts(buf, positions, lengths)]


def decoder_names() -> list[str]:
    """Names of the built-in decoders, for help text and error messages."""
    return list(BUILTIN_DECODERS)


# ---------------------------------------------------------------------------
# User decoders
# ---------------------------------------------------------------------------


class UserDecoder:
    """A decoder supplied by the user as a Python callable.

    Exceptions from user code become :class:`DecoderError` (keeping the
    original type and message, chained as ``__cause__``) so a caller can
    report them without a traceback; results that are not ``str`` are printed
    with ``str()``, like Kafka prints whatever its decoder returns with
    ``toString()``.
    """

    __slots__ = ("name", "_func")

    def __init__(self, name: str, func: Callable[[bytes], Any]) -> None:
        self.name = name
        self._func = func

    def decode(self, data: bytes) -> str:
        try:
            result = self._func(data)
            return result if isinstance(result, str) else str(result)
        except DecoderError:
            raise  # already written for a user (plugins may raise it themselves)
        except Exception as exc:
            raise DecoderError(
                f"decoder {self.name!r} failed: {type(exc).__name__}: {exc}"
            ) from exc

    def __repr__(self) -> str:
        return f"UserDecoder({self.name!r}, {self._func!r})"


def _accepted() -> str:
    return (
        f"A decoder is one of {', '.join(decoder_names())}; {SCHEMA_REGISTRY} (Schema Registry framed data); "
        "a Kafka decoder class name (StringDecoder, IntegerDecoder, LongDecoder or "
        "DefaultDecoder, in org.apache.kafka.tools.api or kafka.serializer); "
        "or a Python import path module:attr (or module.attr) naming a function "
        "taking bytes, a class with a no-argument constructor and a decode(bytes) "
        "method, or an object with a decode(bytes) method"
    )


def _load_error(spec: str, problem: str) -> DecoderLoadError:
    return DecoderLoadError(f"invalid decoder {spec!r}: {problem}. {_accepted()}.")


def _split_import_path(spec: str) -> tuple[str, list[str]]:
    """``"pkg.mod:obj.attr"`` -> ("pkg.mod", ["obj", "attr"]); ``"pkg.mod.f"`` -> ("pkg.mod", ["f"])."""
    if ":" in spec:
        module, _, attr = spec.partition(":")
        attrs = attr.split(".")
    elif "." in spec:
        module, _, attr = spec.rpartition(".")
        attrs = [attr]
    else:
        raise _load_error(spec, "not a built-in decoder name and not an import path")
    # Checked up front because importlib gives confusing errors for these
    # (e.g. a leading dot asks for a relative import).
    if not all(part.isidentifier() for part in module.split(".")):
        raise _load_error(spec, f"{module!r} is not a module name")
    if not all(part.isidentifier() for part in attrs):
        raise _load_error(spec, f"{'.'.join(attrs)!r} is not an attribute name")
    return module, attrs


def _import_target(spec: str) -> Any:
    module_name, attrs = _split_import_path(spec)
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        hint = ""
        if spec.startswith(("org.apache.", "kafka.")):
            # A Java class name that is not one of our aliases.
            hint = " (Kafka's Java decoder classes cannot be run by kdump; write a Python decoder)"
        elif isinstance(exc, ModuleNotFoundError):
            hint = " (is its directory on PYTHONPATH?)"
        raise _load_error(spec, f"cannot import {module_name!r}: {exc}{hint}") from exc
    except Exception as exc:  # the module itself raised while being imported
        raise _load_error(
            spec, f"importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    path = module_name
    for attr in attrs:
        try:
            target = getattr(target, attr)
        except AttributeError as exc:
            raise _load_error(spec, f"{path!r} has no attribute {attr!r}") from exc
        path = f"{path}.{attr}"
    return target


def _check_takes_one_argument(func: Callable[..., Any], spec: str, what: str) -> None:
    # Checked at load time so that a wrong signature is one usage error, not
    # the same DecoderError on every record.
    try:
        import inspect  # only for user decoders; a slow import kdump does not need otherwise

        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return  # some builtins have no introspectable signature; trust them
    try:
        signature.bind(b"")
    except TypeError:
        raise _load_error(
            spec, f"{what} must accept one argument (the bytes), but its signature is {signature}"
        ) from None


def _resolve_callable(target: Any, spec: str) -> Callable[[bytes], Any]:
    if isinstance(target, type):
        try:
            instance = target()
        except Exception as exc:
            raise _load_error(
                spec, f"cannot instantiate class {target.__name__}(): {type(exc).__name__}: {exc}"
            ) from exc
        func = getattr(instance, "decode", None)
        if not callable(func):
            raise _load_error(spec, f"class {target.__name__} has no decode method")
        _check_takes_one_argument(func, spec, f"{target.__name__}.decode")
        return func
    # bytes/bytearray have a decode method, but a bytes constant is clearly
    # not a decoder; calling it would fail on every record.
    if not isinstance(target, (bytes, bytearray, str)):
        func = getattr(target, "decode", None)
        if callable(func):
            _check_takes_one_argument(func, spec, "its decode method")
            return func
        if callable(target):
            _check_takes_one_argument(target, spec, "the function")
            return target
    raise _load_error(
        spec, f"{type(target).__name__} object is neither a function, a class nor an object with a decode method"
    )


def load_decoder(spec: str, *, schemas: str | None = None, data_paths: Sequence[str] = ()) -> Decoder:
    """Resolve a decoder from its name, Kafka class name or Python import path.

    ``spec`` is one of:

    * a built-in name (``string``, ``hex``, ``base64``, ``json``, ``int32``,
      ``int64``) -- returns the shared instance from :data:`BUILTIN_DECODERS`;
    * ``schema-registry`` -- Confluent Schema Registry framed Avro, Protobuf or
      JSON Schema data (:mod:`kdump.decode.schema_registry`), with the schemas at
      ``schemas`` or, without it, in the registry's storage partition found
      beside ``data_paths`` (the files being read);
    * a Kafka decoder class name from :data:`KAFKA_DECODER_ALIASES`;
    * ``package.module:attr`` (``attr`` may be dotted, e.g. ``Class.method``)
      or ``package.module.attr``, where the attribute is a function taking
      bytes, a class (instantiated once with no arguments; its ``decode``
      method is used) or an object with a ``decode`` method.

    Raises :class:`DecoderLoadError` with a message naming the spec and the
    accepted forms if it cannot be resolved.  Importing runs the user's module
    code, as any plugin mechanism must.
    """
    spec = spec.strip()
    if not spec:
        raise _load_error(spec, "empty name")
    builtin = BUILTIN_DECODERS.get(spec) or BUILTIN_DECODERS.get(KAFKA_DECODER_ALIASES.get(spec, ""))
    if builtin is not None:
        return builtin
    if spec == SCHEMA_REGISTRY:
        from kdump.decode.schema_registry import registry_decoder
        return registry_decoder(schemas, data_paths)
    target = _import_target(spec)
    return UserDecoder(spec, _resolve_callable(target, spec))
