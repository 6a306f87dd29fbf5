"""The engine a serving container starts and its command line, read and rewritten as the engine reads it.

vLLM and SGLang parse their command lines with argparse (their options: ``engine_flags``), and vLLM reads a
long name with underscores for dashes (``--kv_transfer_config``: its
FlexibleArgumentParser rewrites the part of a name before the first ``.``) and a JSON option by its keys
(``--kv-transfer-config.kv_connector NixlConnector``). Every reading and rewriting of a server's flags
goes through ``ServerCommand``, so each spelling an engine takes is honoured everywhere.

A container may also start its engine from a shell script (``sh -c SCRIPT [NAME ARG...]``), as manifests
that source a network set-up first do. Its words are the script's, not ours to edit: where the script's
last command execs the engine with ``"$@"`` last, flags can still reach the engine as the script's
arguments, which is how they are given; the script itself is never rewritten.
"""

from __future__ import annotations

import os

from fusion_helm.errors import InvalidSpec, show
from fusion_helm.limits import count
from fusion_helm.model.engine_flags import DISAGGREGATION_MODE, KV_TRANSFER_CONFIG, MAX_PORT, MODEL, Engine, Option
from fusion_helm.model.shell import last_exec
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


VLLM_PROGRAMS = frozenset({"vllm"})
VLLM_MODULES = frozenset({"vllm.entrypoints.openai.api_server", "vllm.entrypoints.cli.main"})
SGLANG_PROGRAMS = frozenset({"sglang"})
SGLANG_MODULES = frozenset({"sglang.launch_server"})
SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh"})


def moves_kv(server: ServerCommand) -> bool:
    """The engine moves a prefill's KV cache to its decode (or takes it): vLLM's --kv-transfer-config (whole or
    by its keys), SGLang's --disaggregation-mode."""
    return server.given(KV_TRANSFER_CONFIG) or server.given(DISAGGREGATION_MODE)


def engine_of(words: Sequence[str]) -> Engine | None:
    """The engine a command line starts: ``vllm …``, ``python -m vllm.entrypoints.openai.api_server``,
    ``sglang …`` or ``python -m sglang.launch_server``; None for anything else."""
    if not words:
        return None
    program = os.path.basename(words[0])
    module = words[2] if len(words) > 2 and words[1] == "-m" else None
    if program in VLLM_PROGRAMS or module in VLLM_MODULES:
        return Engine.VLLM
    if program in SGLANG_PROGRAMS or module in SGLANG_MODULES:
        return Engine.SGLANG
    return None


@record
class ShellScript:
    """A container's ``SHELL -c SCRIPT [NAME [ARG...]]``."""

    arguments: int
    """Where the script's arguments ($1 …) start among the command line's words."""
    named: bool
    """The command line gives the script a name ($0)."""
    tail: tuple[str, ...] | None
    """The words of the command the script ends by exec'ing, ``"$@"`` left out; None when its last
    command is no plain ``exec``."""
    passes_arguments: bool
    """That exec ends with ``"$@"``: the script's arguments reach the engine, after its own words."""
    unread: str = ""
    """Why ``tail`` is None, as a clause about the script (fusion_helm/model/shell.py)."""


@record
class Occurrence:
    """Where an option is given among a command line's words."""

    index: int
    """Its word's index among the command line's words (among the script's exec words when ``in_script``)."""
    written: str
    """The option as the word spells it: ``--kv_transfer_config``, ``-n``."""
    value: str | None
    """Its value (None for a switch)."""
    key: str | None = None
    """vLLM's dotted key of a JSON option (``kv_connector`` of ``--kv-transfer-config.kv_connector``)."""
    inline: bool = False
    """Its value in the same word (``--port=8000``, ``-n2``)."""
    in_script: bool = False
    """In the shell script's own words: read, never rewritten."""


@record
class ServerCommand:
    """The command line a serving container starts its engine with, as the engine reads it.

    ``words`` is the container's command line as it runs: the image's entrypoint (``implied``: the role's
    serving command) where the container gives no command, then its ``command`` and its ``args``. Flags
    are read over the words the engine gets and rewritten only among the container's own words; ``write``
    puts those back as ``command`` and ``args``, split where the container split them.
    """

    words: tuple[str, ...]
    implied: int
    command: int
    """How many words after the implied ones are the container's ``command``."""
    engine: Engine | None
    script: ShellScript | None = None
    where: str = ""
    path: str = ""
    """The container's field path, for errors."""

    @property
    def engine_words(self) -> tuple[str, ...]:
        """The engine's own command line (a script's: its exec's words, then its arguments if it passes them)."""
        if self.script is None:
            return self.words
        tail = self.script.tail or ()
        return (*tail, *self.words[self.script.arguments:]) if self.script.passes_arguments else tail

    @property
    def unread(self) -> str:
        """Why the engine's command line is not known, where a script's last command is no plain exec (a
        clause: ``its last command is a pipeline ('|')``); empty otherwise."""
        return self.script.unread if self.script is not None and self.script.tail is None else ""

    def as_engine(self, engine: Engine) -> ServerCommand:
        """The command line read as ENGINE reads it (a bootstrap says which engine it launches)."""
        return ServerCommand(self.words, self.implied, self.command, engine, self.script, self.where, self.path)

    def occurrences(self, option: Option) -> list[Occurrence]:
        """Where OPTION is given, in the order the engine reads them."""
        found = []
        if self.script is not None:
            found += [Occurrence(o.index, o.written, o.value, o.key, o.inline, in_script=True)
                      for o in _find(self.script.tail or (), option, self.engine)]
            if not self.script.passes_arguments:
                return found
        start = self.script.arguments if self.script is not None else 0
        return found + [Occurrence(o.index + start, o.written, o.value, o.key, o.inline)
                        for o in _find(self.words[start:], option, self.engine)]

    def given(self, option: Option) -> bool:
        return bool(self.occurrences(option))

    def value(self, option: Option) -> tuple[str | None, Occurrence | None]:
        """OPTION's value as the engine takes it (the last one given; dotted keys aside), and where."""
        whole = [o for o in self.occurrences(option) if o.key is None]
        return (whole[-1].value, whole[-1]) if whole else (None, None)

    def port(self, option: Option, default: int, what: str) -> int:
        """OPTION's value as a port number, DEFAULT where not given; refused by field where it is none (a
        shell expansion, a word), WHAT saying what the port is for."""
        value, occurrence = self.value(option)
        if occurrence is None:
            return default
        port = None if value is None else count(value)
        if port is None or not 1 <= port <= MAX_PORT:
            raise InvalidSpec(self.where, self.field(occurrence),
                              f"must give a port number (1 to {MAX_PORT}) {what}, got {show(value)}")
        return port

    def json_value(self, option: Option) -> tuple[Any, Occurrence | None]:
        """A JSON option as vLLM assembles it — its dotted keys merged (vLLM puts them last, so they win),
        else the last whole value — and where; NOT_JSON for a value that is no JSON, None where not given."""
        occurrences = self.occurrences(option)
        dotted = [o for o in occurrences if o.key is not None]
        if dotted:
            merged: dict[str, Any] = {}
            for occurrence in dotted:
                merged = _merged(merged, (occurrence.key or "").split("."), _json(occurrence.value or ""))
            return merged, dotted[-1]
        text, last = self.value(option)
        if last is None:
            return None, None
        value = _json(text or "")
        return (NOT_JSON if value is text else value), last

    def field(self, occurrence: Occurrence) -> str:
        """The field path of the word an occurrence is given in (the script's, for one in it)."""
        return self._field_of(self._script_index() if occurrence.in_script else occurrence.index)

    @property
    def script_field(self) -> str:
        """The field path of the shell script's own word."""
        return self._field_of(self._script_index())

    def _field_of(self, index: int) -> str:
        own = index - self.implied
        return f"{self.path}.command[{own}]" if own < self.command else f"{self.path}.args[{own - self.command}]"

    def _script_index(self) -> int:
        assert self.script is not None
        return self.script.arguments - (2 if self.script.named else 1)

    def model(self) -> tuple[str | None, str | None]:
        """The model the engine is told to serve, and the field that names it (None, None: none named).
        vLLM takes it as ``vllm serve MODEL`` too, which wins over ``--model``."""
        index = self._positional_model()
        if index is not None:
            return self.words[index], self._field_of(index)
        if self.script is not None and self.script.tail is not None:
            in_script = _serve_model_index(self.script.tail)
            if in_script is not None:
                return self.script.tail[in_script], self.script_field
        value, occurrence = self.value(MODEL)
        return value, None if occurrence is None else self.field(occurrence)

    def with_model(self, model: str, why: str) -> ServerCommand:
        """The command line serving MODEL: vLLM's positional MODEL rewritten where given so, else --model
        (SGLang's --model-path). A script that names the model in its own words is refused by field (they
        are not ours to edit, and vLLM's positional would win over any flag passed on)."""
        index = self._positional_model()
        if index is not None:
            words = list(self.words)
            words[index] = model
            return ServerCommand(tuple(words), self.implied, self.command, self.engine, self.script, self.where,
                                 self.path)
        if self.script is not None and self.script.tail is not None and _serve_model_index(self.script.tail):
            raise InvalidSpec(self.where, self.script_field,
                              f"the script names the model to serve in its own words, and {why}: end it with "
                              '`exec vllm serve "$@"` and give the model as its argument (--model MODEL)')
        return self.with_value(MODEL, model, why)

    def _positional_model(self) -> int | None:
        """Where the container's own words give vLLM's ``serve MODEL``, MODEL's index."""
        if self.engine is not Engine.VLLM or self.script is not None:
            return None
        index = _serve_model_index(self.words)
        return index if index is not None and index >= self.implied else None

    def with_value(self, option: Option, value: str, why: str) -> ServerCommand:
        """The command line with OPTION given VALUE: the container's own occurrences rewritten, or the
        option appended where none is or the script's words give it (the engine takes the last). WHY says,
        in errors, what needs it."""
        occurrences = self.occurrences(option)
        if not occurrences or any(occurrence.in_script for occurrence in occurrences):
            return self.appended([f"{option.name(self.engine)}={value}"], why)
        words = list(self.words)
        for occurrence in occurrences:
            if not occurrence.inline:
                words[occurrence.index + 1] = value
            elif "=" in words[occurrence.index]:
                words[occurrence.index] = f"{words[occurrence.index].partition('=')[0]}={value}"
            else:  # -n2
                words[occurrence.index] = f"{occurrence.written}{value}"
        return ServerCommand(tuple(words), self.implied, self.command, self.engine, self.script, self.where,
                             self.path)

    def without(self, options: Sequence[Option], why: str) -> ServerCommand:
        """The command line without OPTIONS. One the script's own words give cannot be taken out: it is
        refused by field, WHY saying what refuses it."""
        drop: set[int] = set()
        for option in options:
            for occurrence in self.occurrences(option):
                if occurrence.in_script:
                    raise InvalidSpec(self.where, self.field(occurrence),
                                      f"the script gives {occurrence.written}, which {why}; give it as an argument "
                                      "of the script instead (where it can be left out)")
                drop.add(occurrence.index)
                if option.takes_value and not occurrence.inline:
                    drop.add(occurrence.index + 1)
        if not drop:
            return self
        words = tuple(word for index, word in enumerate(self.words) if index not in drop)
        command = self.command - sum(self.implied <= index < self.implied + self.command for index in drop)
        return ServerCommand(words, self.implied, command, self.engine, self.script, self.where, self.path)

    def appended(self, words: Sequence[str], why: str) -> ServerCommand:
        """The command line with WORDS after its own, where the engine reads them last (as a script's
        arguments, for a script: see ``passing``)."""
        if not words:
            return self
        ready = self.passing(why)
        return ServerCommand((*ready.words, *words), ready.implied, ready.command, ready.engine, ready.script,
                             ready.where, ready.path)

    def passing(self, why: str) -> ServerCommand:
        """The command line ready to take more words that reach its engine: a script's given a name (its
        ``$0``) so that what follows is its arguments. A script that does not exec its engine with ``"$@"``
        last cannot pass them on: refused by field, WHY saying what needs them."""
        script = self.script
        if script is None or (script.named and script.passes_arguments):
            return self
        if not script.passes_arguments:
            cause = ('it execs its engine without "$@" last' if script.tail is not None else script.unread)
            raise InvalidSpec(self.where, self.script_field,
                              f"{why}, but the script cannot pass flags to its engine ({cause}): end it by "
                              'exec\'ing the engine with "$@" last (exec vllm serve … "$@"), and flags given as '
                              "the script's arguments reach it")
        # Without a name given, the shell names the script after itself: given so, the arguments follow it.
        name = self.words[0]
        return ServerCommand((*self.words, name), self.implied, self.command, self.engine,
                             ShellScript(script.arguments + 1, True, script.tail, True), self.where, self.path)

    def write(self, container: Mapping[str, Any]) -> dict[str, Any]:
        """CONTAINER with this command line as its command and args."""
        own = list(self.words[self.implied:])
        result = {key: value for key, value in container.items() if key not in ("command", "args")}
        if self.command:
            result["command"] = own[:self.command]
        if own[self.command:] or "args" in container:
            result["args"] = own[self.command:]
        return result


def _serve_model_index(words: Sequence[str]) -> int | None:
    """In ``vllm serve MODEL …`` (or ``python -m vllm.entrypoints.cli.main serve MODEL``), MODEL's index."""
    if engine_of(words) is not Engine.VLLM:
        return None
    serve = 1 if os.path.basename(words[0]) in VLLM_PROGRAMS else 3
    model = serve + 1
    if len(words) > model and words[serve] == "serve" and not words[model].startswith("-"):
        return model
    return None


def server_command(container: Mapping[str, Any], default_command: Sequence[str], where: str, path: str
                   ) -> ServerCommand:
    """How CONTAINER (at PATH of document WHERE) starts its engine: its command (else DEFAULT_COMMAND, the
    image's entrypoint as the role says it) and args; the engine is the command line's or, for a shell
    script, its exec's."""
    command = [str(word) for word in container.get("command") or ()]
    args = [str(word) for word in container.get("args") or ()]
    implied = [] if command else [str(word) for word in default_command]
    words = (*implied, *command, *args)
    script = _shell_script(words)
    engine = engine_of(script.tail or () if script is not None else words)
    return ServerCommand(words, len(implied), len(command), engine, script, where, path)


def _shell_script(words: Sequence[str]) -> ShellScript | None:
    if not words or os.path.basename(words[0]) not in SHELLS or "-c" not in words[1:]:
        return None
    flag = words.index("-c", 1)
    if flag + 1 >= len(words) or any(not word.startswith("-") for word in words[1:flag]):
        return None
    named = flag + 2 < len(words)
    last = last_exec(words[flag + 1])
    return ShellScript(flag + 3 if named else flag + 2, named, last.words, last.passes_arguments, last.unread)


def _script_at(script: ShellScript, arguments: int) -> ShellScript:
    return ShellScript(arguments, script.named, script.tail, script.passes_arguments, script.unread)


NOT_JSON = object()
"""The value of a JSON option that is no JSON."""


def _json(text: str) -> Any:
    """TEXT as JSON, else TEXT itself (as vLLM reads a dotted key's value)."""
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


def _merged(merged: Mapping[str, Any], keys: Sequence[str], value: Any) -> dict[str, Any]:
    result = dict(merged)
    head, *rest = keys
    if rest:
        inner = result.get(head)
        result[head] = _merged(inner if isinstance(inner, dict) else {}, rest, value)
    else:
        result[head] = value
    return result


def _find(words: Sequence[str], option: Option, engine: Engine | None) -> list[Occurrence]:
    """OPTION's occurrences in WORDS as ENGINE's parser reads them (an unknown engine's as vLLM's, the most
    lenient); the word after an option that takes a value is that value, never read as an option."""
    read = engine or Engine.VLLM
    spellings = (*option.spellings.get(read, ()), *option.abbreviations.get(read, ()))
    if not spellings:
        return []
    found = []
    index = 0
    while index < len(words):
        match = _match(words[index], spellings, read, option.takes_value)
        if match is not None:
            written, key, value = match
            if value is None and option.takes_value and index + 1 < len(words):
                found.append(Occurrence(index, written, words[index + 1], key))
                index += 1
            else:
                found.append(Occurrence(index, written, value, key, inline=value is not None))
        index += 1
    return found


def _match(word: str, spellings: Sequence[str], engine: Engine, takes_value: bool
           ) -> tuple[str, str | None, str | None] | None:
    """(the option as written, its dotted key, its value in the word) where WORD gives one of SPELLINGS
    as ENGINE reads it; else None."""
    if not word.startswith("-") or word in ("-", "--"):
        return None
    written, equals, value = word.partition("=")
    name, key = written, None
    if written.startswith("--") and engine is Engine.VLLM:
        head, dot, dotted = written[2:].partition(".")
        name, key = "--" + head.replace("_", "-"), (dotted if dot else None)
    if name in spellings:
        return written, key, (value if equals else None)
    if takes_value and not equals and not word.startswith("--"):
        # argparse takes a one-letter short option's value joined to it: -n2
        for spelling in spellings:
            if len(spelling) == 2 and word.startswith(spelling):
                return spelling, None, word[2:]
    return None
