"""Tests for kdump.decode.payload: Java-exact UTF-8, built-in decoders, aliases, user decoders."""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kdump.decode.payload import (
    BUILTIN_DECODERS,
    KAFKA_DECODER_ALIASES,
    Decoder,
    DecoderError,
    DecoderLoadError,
    UserDecoder,
    decoder_names,
    java_utf8,
    load_decoder,
)

VECTORS = Path(__file__).parent.parent / "fixtures" / "java-utf8" / "vectors.txt"
PLUGINS = "decoder_plugins"  # tests/decoder_plugins.py


def read_vectors() -> list[tuple[bytes, str]]:
    """(input bytes, Java's string) for every line of vectors.txt.

    Format: hex input, one space, hex of Java's result re-encoded as UTF-8.
    Either field may be empty (an empty input decodes to an empty string).
    """
    cases = []
    for line in VECTORS.read_text(encoding="ascii").splitlines():
        if not line.strip():
            continue
        given_hex, _, expected_hex = line.partition(" ")
        cases.append((bytes.fromhex(given_hex), bytes.fromhex(expected_hex).decode("utf-8")))
    return cases


def reference_java_utf8(data: bytes) -> str:
    """Independent model of Java's decoder, written from the Unicode standard.

    Well-formed sequences per Unicode Table 3-7; an ill-formed one becomes one
    U+FFFD per maximal subpart (what both Python and Java do), except that
    Java accepts ED A0-BF as a sequence prefix like any other E1-EF lead and
    replaces the resulting surrogate afterwards.
    """
    out = []
    i, n = 0, len(data)
    while i < n:
        lead = data[i]
        if lead < 0x80:
            out.append(chr(lead))
            i += 1
            continue
        if 0xC2 <= lead <= 0xDF:
            need, lo, hi = 1, 0x80, 0xBF
        elif lead == 0xE0:
            need, lo, hi = 2, 0xA0, 0xBF
        elif 0xE1 <= lead <= 0xEF:  # ED included: the Java difference
            need, lo, hi = 2, 0x80, 0xBF
        elif lead == 0xF0:
            need, lo, hi = 3, 0x90, 0xBF
        elif 0xF1 <= lead <= 0xF3:
            need, lo, hi = 3, 0x80, 0xBF
        elif lead == 0xF4:
            need, lo, hi = 3, 0x80, 0x8F
        else:
            out.append("\ufffd")
            i += 1
            continue
        j = i + 1
        while j < n and j - i <= need:
            low, high = (lo, hi) if j == i + 1 else (0x80, 0xBF)
            if not low <= data[j] <= high:
                break
            j += 1
        if j - i == need + 1:
            cp = lead & (0x7F >> (need + 1))
            for b in data[i + 1 : j]:
                cp = (cp << 6) | (b & 0x3F)
            out.append("\ufffd" if 0xD800 <= cp <= 0xDFFF else chr(cp))
        else:
            out.append("\ufffd")
        i = j
    return "".join(out)


# ---------------------------------------------------------------------------
# java_utf8
# ---------------------------------------------------------------------------


def test_vectors_file_present_and_large() -> None:
    cases = read_vectors()
    # All 1-3 byte sequences alone are tens of thousands; a truncated copy
    # would silently weaken the next tests.
    assert len(cases) > 50_000


def test_java_utf8_matches_every_vector() -> None:
    failures = [
        (data.hex(), java_utf8(data).encode("utf-8").hex(), expected.encode("utf-8").hex())
        for data, expected in read_vectors()
        if java_utf8(data) != expected
    ]
    assert failures == [], f"{len(failures)} mismatches (input, got, want), first: {failures[:5]}"


def test_reference_model_matches_every_vector() -> None:
    # Validates the model used as an oracle in the property tests below.
    failures = [data.hex() for data, expected in read_vectors() if reference_java_utf8(data) != expected]
    assert failures == [], failures[:5]


def test_vectors_exercise_the_java_difference() -> None:
    # The fixture must contain cases where Python's "replace" is wrong, or it
    # would not test the custom handler at all.
    differing = [d for d, want in read_vectors() if d.decode("utf-8", "replace") != want]
    assert differing
    assert all(b"\xed" in d for d in differing)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", ""),
        (b"abc", "abc"),
        (b"\xc3\xa9", "\u00e9"),
        (b"\xf0\x9f\x98\x80", "\U0001f600"),
        (b"\xed\x9f\xbf", "\ud7ff"),  # last code point before the surrogates: valid
        (b"\xee\x80\x80", "\ue000"),  # first after them: valid
        # Encoded surrogates: one U+FFFD for ED + A0-BF + one continuation byte.
        (b"\xed\xa0\x80", "\ufffd"),
        (b"\xed\xbf\xbf", "\ufffd"),
        (b"\xed\xa0\x80\x80", "\ufffd\ufffd"),  # only one continuation byte is taken
        (b"\xed\xa0", "\ufffd"),  # truncated at the end
        (b"\xed\xa0A", "\ufffdA"),  # cut short by a non-continuation byte
        (b"\xed\xa0\xed\xa0\x80", "\ufffd\ufffd"),
        (b"x\xed\xb0\x80y", "x\ufffdy"),
        # Everything else as Python's "replace".
        (b"\xed\x80", "\ufffd"),
        (b"\xc3(", "\ufffd("),
        (b"\x80\x80", "\ufffd\ufffd"),
        (b"\xe1\x80\xed\xa0\x80", "\ufffd\ufffd"),
        (b"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"),
        (b"\xc0\xaf", "\ufffd\ufffd"),
    ],
)
def test_java_utf8_hand_checked(data: bytes, expected: str) -> None:
    assert java_utf8(data) == expected


def test_java_utf8_accepts_bytes_like() -> None:
    data = b"a\xed\xa0\x80b\xff"
    assert java_utf8(bytearray(data)) == java_utf8(memoryview(data)) == "a\ufffdb\ufffd"
    assert java_utf8(memoryview(b"ok")) == "ok"


def test_error_handler_registered_and_decode_only() -> None:
    handler = codecs.lookup_error("kdump-java")
    assert b"\xed\xa0\x80!".decode("utf-8", "kdump-java") == "\ufffd!"
    with pytest.raises(UnicodeEncodeError):
        handler(UnicodeEncodeError("ascii", "\u00e9", 0, 1, "test"))


@given(st.text(st.characters(codec="utf-8")))
def test_valid_utf8_round_trips(text: str) -> None:
    assert java_utf8(text.encode("utf-8")) == text


@given(st.binary(max_size=200))
def test_binary_matches_reference_model(data: bytes) -> None:
    assert java_utf8(data) == reference_java_utf8(data)


# Random bytes rarely contain ED A0-BF; bias the input toward it.
_surrogate_heavy = st.lists(
    st.one_of(
        st.binary(max_size=4),
        st.sampled_from([b"\xed", b"\xed\xa0", b"\xed\xbf\x80", b"\x80", b"\xe1", b"\xf0\x90"]),
    ),
    max_size=20,
).map(b"".join)


@given(_surrogate_heavy)
def test_surrogate_heavy_binary_matches_reference_model(data: bytes) -> None:
    result = java_utf8(data)
    assert result == reference_java_utf8(data)
    result.encode("utf-8")  # never a lone surrogate: always printable


@given(st.binary(max_size=200).filter(lambda d: b"\xed" not in d))
def test_without_ed_equals_python_replace(data: bytes) -> None:
    assert java_utf8(data) == data.decode("utf-8", "replace")


# ---------------------------------------------------------------------------
# Built-in decoders
# ---------------------------------------------------------------------------


def decode(name: str, data: bytes) -> str:
    return BUILTIN_DECODERS[name].decode(data)


def test_builtin_names() -> None:
    assert decoder_names() == ["string", "hex", "base64", "json", "int32", "int64"]
    assert list(BUILTIN_DECODERS) == decoder_names()
    for name, decoder in BUILTIN_DECODERS.items():
        assert decoder.name == name
        assert isinstance(decoder, Decoder)
        assert decoder.description


def test_string_decoder_is_java_utf8() -> None:
    assert decode("string", b"message value 1") == "message value 1"
    assert decode("string", b"\xed\xa0\x80") == "\ufffd"


@pytest.mark.parametrize(
    ("data", "expected"), [(b"", ""), (b"\x00", "00"), (b"\x00\xff\x10\xab", "00ff10ab"), (b"Kafka", "4b61666b61")]
)
def test_hex_literals(data: bytes, expected: str) -> None:
    assert decode("hex", data) == expected


@given(st.binary(max_size=100))
def test_hex_matches_binascii(data: bytes) -> None:
    assert decode("hex", data) == binascii.hexlify(data).decode("ascii")


@pytest.mark.parametrize(  # RFC 4648 section 10 test vectors
    ("data", "expected"),
    [
        (b"", ""),
        (b"f", "Zg=="),
        (b"fo", "Zm8="),
        (b"foo", "Zm9v"),
        (b"foob", "Zm9vYg=="),
        (b"fooba", "Zm9vYmE="),
        (b"foobar", "Zm9vYmFy"),
        (b"\xfb\xff", "+/8="),  # standard alphabet, not URL-safe
    ],
)
def test_base64_literals(data: bytes, expected: str) -> None:
    assert decode("base64", data) == expected


@given(st.binary(max_size=100))
def test_base64_round_trips(data: bytes) -> None:
    out = decode("base64", data)
    assert len(out) % 4 == 0
    assert base64.b64decode(out, validate=True) == data


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{ "a" : [1, 2, {"b": null}] }', '{"a":[1,2,{"b":null}]}'),
        (b'"caf\xc3\xa9"', '"café"'),  # non-ASCII kept, not \u-escaped
        (b'"caf\\u00e9"', '"café"'),
        (b'"\\ud83d\\ude00"', '"\U0001f600"'),  # escaped pair -> one character
        (b'"\\ud800"', '"\\ud800"'),  # lone surrogate stays escaped
        (b'{"k": "\\ud800x"}', '{"k":"\\ud800x"}'),
        (b" 42 ", "42"),
        (b"-1.5e3", "-1500.0"),
        (b"true", "true"),
        (b'"tab\\there"', '"tab\\there"'),
        (b'{"a":1,"a":2}', '{"a":2}'),
    ],
)
def test_json_literals(data: bytes, expected: str) -> None:
    assert decode("json", data) == expected


@pytest.mark.parametrize(
    "data", [b"", b"{", b"not json", b"{'a': 1}", b"NaN", b"[Infinity]", b"-Infinity", b"[1,]", b"[" * 100_000]
)
def test_json_invalid_raises_decoder_error(data: bytes) -> None:
    with pytest.raises(DecoderError):
        decode("json", data)


def test_json_error_message_is_readable() -> None:
    with pytest.raises(DecoderError, match="not valid JSON"):
        decode("json", b"{oops")


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(st.characters(codec="utf-8")),
        lambda children: st.lists(children, max_size=4)
        | st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=5), children, max_size=4),
        max_leaves=20,
    )
)
def test_json_round_trips(obj: object) -> None:
    pretty = json.dumps(obj, indent=2, ensure_ascii=True).encode("utf-8")
    out = decode("json", pretty)
    assert json.loads(out) == obj
    assert "\n" not in out  # compact


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\x00\x00\x01\x00", "256"),
        (b"\xff\xff\xff\xff", "-1"),
        (b"\x7f\xff\xff\xff", "2147483647"),
        (b"\x80\x00\x00\x00", "-2147483648"),
        (b"\x00\x00\x00\x2a\x99\x99", "42"),  # extra bytes ignored, like ByteBuffer.getInt
    ],
)
def test_int32_literals(data: bytes, expected: str) -> None:
    assert decode("int32", data) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\x00\x00\x00\x00\x00\x00\x01\x00", "256"),
        (b"\xff" * 8, "-1"),
        (b"\x7f" + b"\xff" * 7, "9223372036854775807"),
        (b"\x80" + b"\x00" * 7, "-9223372036854775808"),
        (b"\x00\x00\x01\x8b\xcf\xe5\x68\x00\xff", "1700000000000"),
    ],
)
def test_int64_literals(data: bytes, expected: str) -> None:
    assert decode("int64", data) == expected


@given(st.binary(min_size=4, max_size=12))
def test_int32_matches_struct(data: bytes) -> None:
    assert decode("int32", data) == str(struct.unpack(">i", data[:4])[0])


@given(st.binary(min_size=8, max_size=16))
def test_int64_matches_struct(data: bytes) -> None:
    assert decode("int64", data) == str(struct.unpack(">q", data[:8])[0])


@pytest.mark.parametrize(
    ("name", "size", "length"),
    [("int32", 4, 0), ("int32", 4, 1), ("int32", 4, 3), ("int64", 8, 0), ("int64", 8, 4), ("int64", 8, 7)],
)
def test_int_too_short(name: str, size: int, length: int) -> None:
    with pytest.raises(DecoderError) as info:
        decode(name, b"\x01" * length)
    assert str(info.value) == f"{name} decoder needs {size} bytes, got {length}"


def test_int32_message_example() -> None:
    with pytest.raises(DecoderError, match=r"^int32 decoder needs 4 bytes, got 2$"):
        decode("int32", b"\x00\x01")


# ---------------------------------------------------------------------------
# load_decoder: built-ins and Kafka aliases
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["string", "hex", "base64", "json", "int32", "int64"])
def test_load_builtin(name: str) -> None:
    assert load_decoder(name) is BUILTIN_DECODERS[name]
    assert load_decoder(f"  {name} ") is BUILTIN_DECODERS[name]


@pytest.mark.parametrize("package", ["org.apache.kafka.tools.api", "kafka.serializer"])
@pytest.mark.parametrize(
    ("cls", "builtin"),
    [("StringDecoder", "string"), ("IntegerDecoder", "int32"), ("LongDecoder", "int64"), ("DefaultDecoder", "hex")],
)
def test_kafka_aliases(package: str, cls: str, builtin: str) -> None:
    spec = f"{package}.{cls}"
    assert KAFKA_DECODER_ALIASES[spec] == builtin
    assert load_decoder(spec) is BUILTIN_DECODERS[builtin]


def test_kafka_default_string_decoder_behaviour() -> None:
    decoder = load_decoder("org.apache.kafka.tools.api.StringDecoder")
    assert decoder.decode(b"message key 3") == "message key 3"
    assert load_decoder("kafka.serializer.DefaultDecoder").decode(b"\x01\x02") == "0102"


def test_unknown_kafka_class_explains() -> None:
    with pytest.raises(DecoderLoadError) as info:
        load_decoder("org.apache.kafka.tools.api.FancyDecoder")
    message = str(info.value)
    assert "org.apache.kafka.tools.api.FancyDecoder" in message
    assert "Kafka's Java decoder classes cannot be run" in message
    assert "StringDecoder" in message


# ---------------------------------------------------------------------------
# load_decoder: user decoders
# ---------------------------------------------------------------------------


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    # Make tests/decoder_plugins.py importable whatever pytest's import mode.
    monkeypatch.syspath_prepend(str(Path(__file__).parent))


@pytest.mark.usefixtures("plugins")
@pytest.mark.parametrize("sep", [":", "."])
def test_user_function(sep: str) -> None:
    decoder = load_decoder(f"{PLUGINS}{sep}upper")
    assert isinstance(decoder, UserDecoder)
    assert isinstance(decoder, Decoder)
    assert decoder.name == f"{PLUGINS}{sep}upper"
    assert decoder.decode(b"abc") == "ABC"


@pytest.mark.usefixtures("plugins")
def test_user_class() -> None:
    decoder = load_decoder(f"{PLUGINS}:Reverse")
    assert decoder.decode(b"\x01\x02") == "rev:0201"


@pytest.mark.usefixtures("plugins")
def test_user_object_with_decode() -> None:
    assert load_decoder(f"{PLUGINS}:prefixer").decode(b"\xab") == "x=ab"
    assert load_decoder(f"{PLUGINS}.prefixer").decode(b"\xab") == "x=ab"


@pytest.mark.usefixtures("plugins")
def test_user_dotted_attribute_after_colon() -> None:
    assert load_decoder(f"{PLUGINS}:prefixer.decode").decode(b"\x01") == "x=01"


@pytest.mark.usefixtures("plugins")
def test_user_result_converted_with_str() -> None:
    decoder = load_decoder(f"{PLUGINS}:length")
    assert decoder.decode(b"12345") == "5"


def test_stdlib_function_as_decoder() -> None:
    # Any importable callable works; bytes results are printed with str().
    assert load_decoder("binascii:hexlify").decode(b"\x01") == "b'01'"


@pytest.mark.usefixtures("plugins")
def test_user_exception_wrapped() -> None:
    decoder = load_decoder(f"{PLUGINS}:boom")
    with pytest.raises(DecoderError) as info:
        decoder.decode(b"abc")
    message = str(info.value)
    assert "ValueError" in message
    assert "cannot handle 3 bytes" in message
    assert f"{PLUGINS}:boom" in message
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.usefixtures("plugins")
def test_user_exception_inside_class_wrapped() -> None:
    decoder = load_decoder(f"{PLUGINS}:upper")
    with pytest.raises(DecoderError, match="UnicodeDecodeError"):
        decoder.decode(b"\xff")


def test_user_decoder_error_passes_through() -> None:
    def picky(data: bytes) -> str:
        raise DecoderError("needs a magic byte")

    with pytest.raises(DecoderError) as info:
        UserDecoder("picky", picky).decode(b"")
    assert str(info.value) == "needs a magic byte"


def test_keyboard_interrupt_not_wrapped() -> None:
    def interrupted(data: bytes) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        UserDecoder("i", interrupted).decode(b"")


@pytest.mark.usefixtures("plugins")
@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("", "empty name"),
        ("   ", "empty name"),
        ("nosuchdecoder", "not a built-in decoder name"),
        ("HEX", "not a built-in decoder name"),
        ("kdump_no_such_module_xyz:f", "cannot import 'kdump_no_such_module_xyz': No module named"),
        ("kdump_no_such_pkg.mod.f", "cannot import 'kdump_no_such_pkg.mod': No module named 'kdump_no_such_pkg'"),
        (f"{PLUGINS}:missing", f"'{PLUGINS}' has no attribute 'missing'"),
        (f"{PLUGINS}.missing", f"'{PLUGINS}' has no attribute 'missing'"),
        (f"{PLUGINS}:prefixer.nope", f"'{PLUGINS}.prefixer' has no attribute 'nope'"),
        (f"{PLUGINS}:NOT_A_DECODER", "int object is neither a function, a class nor an object with a decode method"),
        (f"{PLUGINS}:__doc__", "str object is neither"),
        (f"{PLUGINS}:NeedsArgument", "cannot instantiate class NeedsArgument(): TypeError"),
        (f"{PLUGINS}:FailingConstructor", "RuntimeError: no configuration found"),
        (f"{PLUGINS}:NoDecodeMethod", "class NoDecodeMethod has no decode method"),
        (f"{PLUGINS}:two_args", "must accept one argument"),
        ("os:getcwd", "must accept one argument"),
        (".relative:f", "'.relative' is not a module name"),
        (f"{PLUGINS}:", "'' is not an attribute name"),
        (":upper", "'' is not a module name"),
        (f"{PLUGINS}:a:b", "'a:b' is not an attribute name"),
    ],
)
def test_bad_specs(spec: str, problem: str) -> None:
    with pytest.raises(DecoderLoadError) as info:
        load_decoder(spec)
    message = str(info.value)
    assert repr(spec.strip()) in message
    assert problem in message
    # Every message tells the user what would have been accepted.
    assert "A decoder is one of string, hex, base64, json, int32, int64" in message
    assert "module:attr" in message
    assert isinstance(info.value, ValueError)


def test_module_failing_at_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kdump_broken_plugin.py").write_text("raise RuntimeError('half-written plugin')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(DecoderLoadError) as info:
        load_decoder("kdump_broken_plugin:decode")
    message = str(info.value)
    assert "importing 'kdump_broken_plugin' failed: RuntimeError: half-written plugin" in message
    assert "'kdump_broken_plugin:decode'" in message


def test_module_not_found_hints_pythonpath() -> None:
    with pytest.raises(DecoderLoadError, match="PYTHONPATH"):
        load_decoder("kdump_no_such_module_xyz:f")
