"""User decoders for tests/test_decoders.py: one of each form load_decoder accepts."""


def upper(data: bytes) -> str:
    """Function form."""
    return data.decode("ascii").upper()


def length(data: bytes) -> int:
    """Function returning a non-str result (printed with str())."""
    return len(data)


def boom(data: bytes) -> str:
    """Function failing at decode time."""
    raise ValueError(f"cannot handle {len(data)} bytes")


class Reverse:
    """Class form: instantiated with no arguments, then .decode is used."""

    def __init__(self) -> None:
        self.prefix = "rev:"

    def decode(self, data: bytes) -> str:
        return self.prefix + data[::-1].hex()


class NeedsArgument:
    """A class load_decoder cannot instantiate."""

    def __init__(self, setting: str) -> None:
        self.setting = setting

    def decode(self, data: bytes) -> str:
        return self.setting


class NoDecodeMethod:
    """A class without a decode method."""


class FailingConstructor:
    def __init__(self) -> None:
        raise RuntimeError("no configuration found")

    def decode(self, data: bytes) -> str:
        return ""


class _Prefixer:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def decode(self, data: bytes) -> str:
        return self.prefix + data.hex()


#: Object form: an instance with a decode method.
prefixer = _Prefixer("x=")


def two_args(data: bytes, extra: str) -> str:
    """A function with the wrong signature."""
    return extra


NOT_A_DECODER = 42
