"""Data to YAML text that every reader reads back as written: keys in the order they were built, a
string quoted wherever Go's YAML 1.1 reader (Helm's, kubectl's), a YAML 1.2 reader or PyYAML would
read it plain as another type, multi-line strings as literal blocks.

The text is what libyaml's emitter writes (PyYAML's C dumper, block style, 2-space indents), and for
anything but the plainest documents it is libyaml that writes it. A generated object repeats the same
few structures and strings many times over, so the block structure is laid out here and each distinct
string is rendered by libyaml once and remembered; a differential test holds the two to the same bytes.
"""

from __future__ import annotations

from fusion_helm.kio.libyaml import yaml
from fusion_helm.kio.scalars import needs_quotes, pyyaml_tag

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_CACHE_LIMIT = 100_000
_WORD_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_/")
_PRINTABLE = frozenset(chr(code) for code in range(0x20, 0x7F))
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")
_SIMPLE_KEY = 128
"""libyaml writes a longer key as a complex one (``? key``)."""
"""Line breaks to libyaml besides LF: a scalar holding one is laid out by libyaml itself."""


class _Dumper(yaml.CSafeDumper):
    # Generated objects share sub-structures; write them out in full rather than as YAML aliases.
    def ignore_aliases(self, data: Any) -> bool:
        return True

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: Any) -> str:
        # PyYAML's answer, without compiling its patterns where none can match
        if kind is yaml.ScalarNode and implicit[0] and isinstance(value, str):
            return pyyaml_tag(value)
        return super().resolve(kind, value, implicit)  # type: ignore[no-any-return,no-untyped-call]


def _represent_str(dumper: _Dumper, text: str) -> yaml.Node:
    # The emitter falls back to another style where the one asked for cannot hold the text exactly.
    style = "|" if "\n" in text else "'" if needs_quotes(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


def libyaml_dump(obj: Any) -> str:
    """YAML text of one object, as libyaml writes it."""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=1 << 20)


class _Unsure(Exception):
    """Something libyaml might lay out otherwise than the block layout here: it writes the document."""


_lines: dict[str, str | tuple[str, ...]] = {}
"""How each string met so far is written (its line, or a literal block's lines)."""
_floats: dict[float, str | tuple[str, ...]] = {}
_keys: dict[str, str] = {}


def _value(scalar: str | float) -> str | tuple[str, ...]:
    """How libyaml writes SCALAR as a mapping value: its line, or a literal block's header and lines
    (relative to the block's indentation)."""
    cache: dict[Any, str | tuple[str, ...]] = _lines if type(scalar) is str else _floats
    found = cache.get(scalar)
    if found is not None:
        return found
    if type(scalar) is str and _plain_text(scalar):
        found = f"'{scalar}'" if needs_quotes(scalar) else scalar
    else:
        text = libyaml_dump({"k": scalar})
        if not text.startswith("k: ") or not text.endswith("\n") or any(b in text for b in _OTHER_BREAKS):
            raise _Unsure
        first, *rest = text[3:-1].split("\n")
        block = first.startswith("|")
        if (rest and not block) or (block and "+" in first) or text.endswith("\n...\n"):
            raise _Unsure  # a quoted scalar folded over lines, or a block that keeps its final breaks
        found = (first, *rest) if rest else first
    if len(cache) > _CACHE_LIMIT:
        cache.clear()
    cache[scalar] = found
    return found


def _plain_text(text: str) -> bool:
    """Whether libyaml writes TEXT as it is in a block (or single-quoted, when a reader would take it
    for another type): printable ASCII, starting with a letter, digit, '_' or '/', without a quote, a
    trailing blank or colon, and no ': ' or ' #' (libyaml's own analysis decides everything else)."""
    return (text[:1] in _WORD_START and _PRINTABLE.issuperset(text) and "'" not in text and ": " not in text
            and " #" not in text and text[-1] not in (" ", ":"))


def _key(text: object) -> str:
    if not isinstance(text, str):
        raise _Unsure
    found = _keys.get(text)
    if found is not None:
        return found
    if len(text) < _SIMPLE_KEY and _plain_text(text):
        found = f"'{text}'" if needs_quotes(text) else text
    else:
        dumped = libyaml_dump({text: None})
        if not dumped.endswith(": null\n") or "\n" in dumped[:-7] or dumped.startswith("? ") \
                or any(b in dumped for b in _OTHER_BREAKS):
            raise _Unsure
        found = dumped[:-7]
    if len(_keys) > _CACHE_LIMIT:
        _keys.clear()
    _keys[text] = found
    return found


_LITERALS: dict[object, str] = {None: "null", True: "true", False: "false"}


class Writer:
    """Lays out documents. Generated objects share sub-structures (a role's pod spec is the same object
    in every replica): each is laid out once per position, and its lines reused. Written for speed: a
    service of ten thousand replicas is this loop's twenty thousand documents."""

    def __init__(self) -> None:
        self._seen: set[tuple[int, int, str | None]] = set()
        self._laid_out: dict[tuple[int, int, str | None], tuple[object, list[str]]] = {}

    def document(self, obj: Any) -> str:
        """YAML text of one object (deterministic): laid out here where that is certain to match
        libyaml, else by libyaml."""
        if not isinstance(obj, dict) or not obj:
            return libyaml_dump(obj)
        lines: list[str] = []
        try:
            self._collection(lines, obj, 0, None)
        except (_Unsure, RecursionError):
            return libyaml_dump(obj)
        lines.append("")
        return "\n".join(lines)

    def _collection(self, lines: list[str], value: dict[Any, Any] | list[Any], indent: int, first: str | None) -> None:
        """VALUE's lines: laid out anew the first time it is met at this place, kept from its second."""
        key = (id(value), indent, first)
        found = self._laid_out.get(key)
        if found is not None:
            lines.extend(found[1])
            return
        if key in self._seen:
            own: list[str] = []
            self._lay_out(own, value, indent, first)
            self._laid_out[key] = (value, own)  # the value is kept so that its id stays its own
            lines.extend(own)
        else:
            self._seen.add(key)  # most collections are met once: laid out straight into the document
            self._lay_out(lines, value, indent, first)

    def _lay_out(self, lines: list[str], value: dict[Any, Any] | list[Any], indent: int, first: str | None) -> None:
        if type(value) is dict:
            self._mapping(lines, value, indent, first)
        else:
            self._sequence(lines, value, indent, first)  # type: ignore[arg-type]

    def _mapping(self, lines: list[str], mapping: dict[Any, Any], indent: int, first: str | None) -> None:
        """MAPPING at INDENT; its first key goes on the line FIRST opened (a sequence's '- ')."""
        pad = " " * indent
        opening = pad if first is None else first
        append = lines.append
        for key, value in mapping.items():
            head = f"{opening}{_keys.get(key) or _key(key)}:"
            opening = pad
            kind = type(value)
            if kind is str:
                text = _lines.get(value) or _value(value)
                if isinstance(text, str):
                    append(f"{head} {text}")
                else:
                    append(f"{head} {text[0]}")
                    _block(lines, text, indent)
            elif kind is dict:
                if value:
                    append(head)
                    self._collection(lines, value, indent + 2, None)
                else:
                    append(f"{head} {{}}")
            elif kind is list:
                if value:
                    append(head)
                    self._collection(lines, value, indent, None)
                else:
                    append(f"{head} []")
            elif kind is int:
                append(f"{head} {value}")
            else:
                text = _scalar(value)
                if isinstance(text, str):
                    append(f"{head} {text}")
                else:
                    append(f"{head} {text[0]}")
                    _block(lines, text, indent)

    def _sequence(self, lines: list[str], sequence: list[Any], indent: int, first: str | None) -> None:
        pad = f"{' ' * indent}- "
        opening = pad if first is None else f"{first}- "
        append = lines.append
        for item in sequence:
            head, opening = opening, pad
            kind = type(item)
            if kind is dict or kind is list:
                if item:
                    self._collection(lines, item, indent + 2, head)
                else:
                    append(f"{head}{{}}" if kind is dict else f"{head}[]")
            else:
                text = _lines.get(item) or _value(item) if kind is str else _scalar(item)
                if isinstance(text, str):
                    append(f"{head}{text}")
                else:
                    append(f"{head}{text[0]}")
                    _block(lines, text, indent)


def _scalar(value: object) -> str | tuple[str, ...]:
    if type(value) is int:
        return str(value)
    if value is None or type(value) is bool:
        return _LITERALS[value]
    if isinstance(value, str | float) and type(value) in (str, float):
        return _value(value)
    raise _Unsure


def _block(lines: list[str], scalar: tuple[str, ...], indent: int) -> None:
    """The rest of a literal block whose header ended the last line, at INDENT."""
    pad = " " * indent
    lines.extend(f"{pad}{line}" if line else line for line in scalar[1:])


def dump(obj: Any) -> str:
    """YAML text of one object (deterministic)."""
    return Writer().document(obj)
