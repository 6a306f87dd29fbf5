"""The one error type the pipeline raises for bad input, and how it shows what it names."""

MAX_SHOWN = 80
"""Characters of a value an error echoes; the rest is cut."""
MAX_PATH = 300
"""Characters of a field path an error shows: the start and the end of a longer one."""
_KEY_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_KEY_CHARS = _KEY_START | frozenset("0123456789./-")
"""A key of these characters, not starting with a digit, '.', '/' or '-', is written bare in a path."""


class InvalidSpec(Exception):
    """Input that cannot be rendered: names the document, the field path and what is wrong.

    Rendered as ``<where>: <path>: <message>`` on one line, e.g.
    ``InferenceService qwen: spec.roles[1].multinode.nodeCount: must be >= 1, got 0``.
    SUBJECT is the document it is about, when one is: transports that report errors against their
    input's objects (a KRM function's results) find it there.
    """

    def __init__(self, where: str, path: str, message: str, subject: object = None) -> None:
        self.where = where
        self.path = path
        self.message = message
        self.subject = subject
        super().__init__(str(self))

    def __str__(self) -> str:
        path = self.path if len(self.path) <= MAX_PATH else \
            f"{self.path[:MAX_PATH // 2]}…{self.path[-MAX_PATH // 2:]}"
        return one_line(": ".join(part for part in (self.where, path, self.message) if part))


def one_line(text: str) -> str:
    """TEXT with line breaks and other control characters escaped, so it prints as one line."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() or char == " " else char.encode("unicode_escape").decode("ascii")
                   for char in text)


def clip(text: str) -> str:
    """TEXT on one line, cut to MAX_SHOWN characters: a name or file as an error names it."""
    text = one_line(text)
    return text if len(text) <= MAX_SHOWN else f"{text[:MAX_SHOWN - 1]}…"


def show(value: object) -> str:
    """A value as an error quotes it: strings quoted and escaped, everything cut to MAX_SHOWN characters."""
    if isinstance(value, bool) or value is None:
        text = {True: "true", False: "false", None: "null"}[value]
    elif isinstance(value, int):
        text = str(value) if value.bit_length() < 200 else f"a number of {len(hex(value)) * 6 // 5} digits"
    elif isinstance(value, str):
        text = repr(value[:MAX_SHOWN + 1])
    elif isinstance(value, dict):
        text = "a mapping"
    elif isinstance(value, list):
        text = "a list"
    else:
        text = repr(value)
    return text if len(text) <= MAX_SHOWN else f"{text[:MAX_SHOWN - 1]}…"


def format_path(parts: list[str | int] | tuple[str | int, ...]) -> str:
    """``["spec", "roles", 1, "name"]`` → ``spec.roles[1].name``; a key that is not a simple name is
    quoted (``labels["1"]``, ``labels["a b"]``), so it never reads as a list index; a long one is quoted
    cut, as show() cuts values."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif len(part) <= MAX_SHOWN and (not text or (part[:1] in _KEY_START and _KEY_CHARS.issuperset(part))):
            text += f".{part}" if text else part
        else:
            text += f"[{show(part)}]"
    return text


def key_path(path: str, key: str) -> str:
    """PATH extended by the mapping key KEY, as format_path writes it."""
    return format_path([path, key]) if path else format_path([key])
