"""Short content hashes of generated objects' inputs (a role's pod templates, a picker's config):
when they change, what carries them changes, and the pods restart."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _sha256() -> Callable[[bytes], Any]:
    """CPython's own SHA-256 (_sha256, _sha2 from 3.12) where it has one: hashlib loads OpenSSL, a
    start-up cost on every helm call. (``__import__``: importlib is a start-up cost too.)"""
    for module in ("_sha256", "_sha2", "hashlib"):
        try:
            return __import__(module).sha256  # type: ignore[no-any-return]
        except ImportError:
            continue
    raise ImportError("no SHA-256")


_SHA256 = _sha256()


def canonical_json(value: Any) -> str:
    """VALUE as ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` writes it (ASCII, keys
    sorted), byte for byte: the spec hashes of running services depend on it. Without the json module,
    whose import compiles patterns on every post-render."""
    if isinstance(value, str):
        return _json_string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else int.__repr__(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json_string(key)}:{canonical_json(value[key])}" for key in sorted(value)) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(map(canonical_json, value)) + "]"
    raise TypeError(f"not JSON data: {type(value).__name__}")


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _json_string(text: str) -> str:
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return '"' + "".join(_json_char(char) for char in text) + '"'


def _json_char(char: str) -> str:
    if char in _JSON_ESCAPES:
        return _JSON_ESCAPES[char]
    code = ord(char)
    if 0x20 <= code < 0x7F:
        return char
    if code > 0xFFFF:  # a surrogate pair, as JSON writes astral characters
        code -= 0x10000
        return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def short_hash(text: str) -> str:
    """The first 16 hex digits of TEXT's SHA-256."""
    digest: str = _SHA256(text.encode()).hexdigest()
    return digest[:16]
