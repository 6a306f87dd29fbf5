"""The last command of a container's shell script, read by POSIX's token and word rules (XCU 2.3, 2.6.7).

A manifest may start its engine from ``sh -c SCRIPT``; what reaches the engine is the words of the command
the script ends by exec'ing. Those words are read as a shell reads them: quotes removed, a ``\\`` escaping
the next character, a line continuation joined, ``#`` starting a comment only where a word may start, and a
command substitution (``$(…)``, ``$((…))``, backquotes) or parameter expansion (``${…}``) kept whole, as
written, within its word however many parentheses, quotes or spaces it holds. Expansions are not performed:
their text stands for what the shell puts there. (An unquoted substitution may be split into more than one
word when it runs; read as written, it is one.)

Redirections belong to the command they follow (``exec vllm serve "$@" 2>&1`` still execs vllm with
``serve "$@"``): their operators and targets are not arguments. A pipeline, a background ``&``, a subshell,
or a compound command make the last command no plain exec, and the reader says which.
"""

from __future__ import annotations

import itertools
import re

from fusion_helm.errors import show
from fusion_helm.records import record

ARGUMENTS = "$@"
"""A shell's word for all of its script's arguments (``"$@"`` in the script)."""

_OPERATORS = ("&&", "||", ";;", "<<-", "<<", ">>", "<&", ">&", "<>", ">|", "&", "|", ";", "<", ">", "(", ")",
              "\n")
"""POSIX's control and redirection operators, longest first, so that the first that matches is the one."""
_OPERATOR_STARTS = frozenset(operator[0] for operator in _OPERATORS)
_OPERATOR = re.compile("|".join(re.escape(operator) for operator in _OPERATORS))
_ORDINARY = re.compile(r"[^\\'\"$`" + re.escape(" \t\r&|;<>()\n") + "]+")
"""A run of characters that are their word's own, quoted by nothing and ending nothing."""
_SEPARATORS = frozenset({";", "&&", "||", "\n"})
"""Between two commands, the first of which the shell finishes before it reads on."""
_REDIRECTIONS = frozenset({"<", ">", ">>", "<&", ">&", "<>", ">|", "<<", "<<-"})
_RESERVED = frozenset({"!", "{", "}", "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in",
                       "then", "until", "while"})
_BLANKS = " \t\r"
MAX_NESTING = 32
"""Expansions within expansions read before a script is taken as unreadable (no manifest nests so deep)."""
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


class _Unread(Exception):
    """The script cannot be read as a shell reads it: an unclosed quote or substitution."""


@record
class LastExec:
    """What a script's last command execs."""

    words: tuple[str, ...] | None
    """The exec'd command's words, ``"$@"`` left out; None where the last command is no plain exec."""
    passes_arguments: bool
    """``"$@"`` is the exec'd command's last word: the script's arguments reach it, after its own words."""
    unread: str = ""
    """Why ``words`` is None, as a clause about the script (``its last command is a pipeline ('|')``)."""


def last_exec(script: str) -> LastExec:
    """The command SCRIPT ends by exec'ing (``exec ENGINE …``), or why it ends otherwise."""
    try:
        tokens = _tokens(script)
    except _Unread as error:
        return LastExec(None, False, str(error))
    commands: list[list[str | _Operator]] = [[]]
    background: set[int] = set()  # the commands a '&' ends: the shell runs them and goes on
    for token in tokens:
        if isinstance(token, _Operator) and token.text in (*_SEPARATORS, "&"):
            if token.text == "&":
                background.add(len(commands) - 1)
            commands.append([])
        else:
            commands[-1].append(token)
    at, last = next(((at, command) for at, command in reversed(list(enumerate(commands))) if command), (0, []))
    if at in background:
        return LastExec(None, False, "its last command runs in the background ('&')")
    words, unread = _simple_command(last)
    if words is None:
        return LastExec(None, False, unread)
    while words and _ASSIGNMENT.match(words[0]):  # FOO=1 exec …: the assignments go to the exec'd command
        words = words[1:]
    if not words:
        return LastExec(None, False, "it runs no command")
    if words[0] != "exec":
        return LastExec(None, False, f"its last command is {show(words[0])}, no exec")
    arguments = words[1:]
    passes = bool(arguments) and arguments[-1] == ARGUMENTS
    arguments = [word for word in arguments if word != ARGUMENTS]
    if not arguments:
        return LastExec(None, False, "its last command execs no command")
    return LastExec(tuple(arguments), passes)


def _simple_command(tokens: list[str | _Operator]) -> tuple[list[str] | None, str]:
    """The words of a simple command (its redirections left out), or None and what it is instead."""
    words: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if isinstance(token, str):
            if not words and token in _RESERVED:
                return None, f"its last command is a compound command ({show(token)})"
            words.append(token)
            index += 1
            continue
        if token.text in _REDIRECTIONS:
            if words and token.io_number:  # 2>&1: the 2 is the redirection's, not an argument
                words.pop()
            index += 2  # the operator and its target
            continue
        if token.text == "|":
            return None, "its last command is a pipeline ('|')"
        return None, f"its last command is a subshell or compound command ({token.text!r})"
    return words, ""


@record
class _Operator:
    text: str
    io_number: bool = False
    """A redirection right after a word of digits (``2>``): that word is its file descriptor."""


def _tokens(script: str) -> list[str | _Operator]:
    """SCRIPT's tokens: words (quotes removed, expansions as written) and operators."""
    tokens: list[str | _Operator] = []
    word: list[str] = []
    begun = False  # a word begun (an empty "" begins one)
    digits_only = False
    line_start = 0  # the index among TOKENS of the current line's first
    index, end = 0, len(script)
    while index < end:
        char = script[index]
        if char == "\\":
            if script.startswith("\\\n", index):
                index += 2
                continue
            word.append(script[index + 1:index + 2])
            begun, digits_only = True, False
            index += 2
        elif char == "'":
            close = script.find("'", index + 1)
            if close < 0:
                raise _Unread("it has an unclosed '")
            word.append(script[index + 1:close])
            begun, digits_only = True, False
            index = close + 1
        elif char == '"':
            text, index = _double_quoted(script, index + 1, 0)
            word.append(text)
            begun, digits_only = True, False
        elif char in "$`":
            close = _expansion_end(script, index, 0)
            word.append(script[index:close])
            begun, digits_only = True, False
            index = close
        elif char in _BLANKS:
            if begun:
                tokens.append("".join(word))
                word, begun = [], False
            index += 1
        elif char == "#" and not begun:
            newline = script.find("\n", index)
            index = end if newline < 0 else newline
        elif char not in _OPERATOR_STARTS:
            run = _ORDINARY.match(script, index)
            assert run is not None, "CHAR is ordinary"
            digits_only = (not begun or digits_only) and run.group().isdigit()
            word.append(run.group())
            begun = True
            index = run.end()
        else:
            found = _OPERATOR.match(script, index)
            assert found is not None, "CHAR starts an operator"
            operator = found.group()
            io_number = begun and digits_only and operator in _REDIRECTIONS
            if begun:
                tokens.append("".join(word))
                word, begun = [], False
            tokens.append(_Operator(operator, io_number))
            digits_only = False
            index += len(operator)
            if operator == "\n":
                index = _past_here_documents(script, index, tokens[line_start:])
                line_start = len(tokens)
    if begun:
        tokens.append("".join(word))
    return tokens


def _past_here_documents(script: str, index: int, line: list[str | _Operator]) -> int:
    """Past the bodies of the here-documents the LINE of tokens just read opens (``<<EOF``), from INDEX (its
    line break's end): each runs to a line that is its delimiter alone (tabs before it dropped, for
    ``<<-``), or to the script's end."""
    for operator, delimiter in itertools.pairwise(line):
        if not (isinstance(operator, _Operator) and operator.text in ("<<", "<<-") and isinstance(delimiter, str)):
            continue
        while index < len(script):
            newline = script.find("\n", index)
            body_line = script[index:] if newline < 0 else script[index:newline]
            index = len(script) if newline < 0 else newline + 1
            if (body_line.lstrip("\t") if operator.text == "<<-" else body_line) == delimiter:
                break
    return index


def _double_quoted(script: str, index: int, nesting: int) -> tuple[str, int]:
    """The text of a double-quoted string from INDEX (just past its opening quote), quotes and escapes
    removed, expansions as written; and the index past its closing quote. NESTING: how many expansions
    it is within."""
    text: list[str] = []
    while index < len(script):
        char = script[index]
        if char == '"':
            return "".join(text), index + 1
        if char == "\\" and index + 1 < len(script) and script[index + 1] in '$`"\\\n':
            if script[index + 1] != "\n":
                text.append(script[index + 1])
            index += 2
        elif char in "$`":
            close = _expansion_end(script, index, nesting)
            text.append(script[index:close])
            index = close
        else:
            text.append(char)
            index += 1
    raise _Unread('it has an unclosed \'"\'')


def _expansion_end(script: str, index: int, nesting: int) -> int:
    """Past the end of the expansion starting at INDEX (``$(…)``, ``$((…))``, ``${…}``, backquotes, or a
    plain ``$NAME``/``$`` whose end is the word's). NESTING: how many expansions it is within."""
    if nesting >= MAX_NESTING:
        raise _Unread(f"it nests substitutions more than {MAX_NESTING} deep")
    if script[index] == "`":
        close = index + 1
        while close < len(script) and script[close] != "`":
            close += 2 if script[close] == "\\" else 1
        if close >= len(script):
            raise _Unread("it has an unclosed '`'")
        return close + 1
    opening = script[index + 1:index + 2]
    if opening not in ("(", "{"):
        return index + 1  # $NAME, $@, $1: the rest is ordinary word characters
    closing = ")" if opening == "(" else "}"
    depth, position = 0, index + 1
    while position < len(script):
        char = script[position]
        if char == "\\":
            position += 2
            continue
        if char == "'" and opening == "(":
            close = script.find("'", position + 1)
            if close < 0:
                break
            position = close + 1
            continue
        if char == '"':
            _, position = _double_quoted(script, position + 1, nesting + 1)
            continue
        if char in "$`" and position > index + 1:
            position = _expansion_end(script, position, nesting + 1)
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1
    raise _Unread(f"it has an unclosed '${opening}'")
