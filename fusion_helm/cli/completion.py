"""A shell's completion of a command's argparse parser: its subcommands, each one's flags and the choices of
those that take one, files for the rest. Generated from the parser, so it never lags behind it; the script
holds only the parser's own names (no input is written into it)."""

from __future__ import annotations

import argparse
import re

NAME = re.compile(r"^[-A-Za-z0-9_.]+$")
"""A word the script may hold bare: every name and choice of the parser is one (checked)."""


def script(program: str, parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of PROGRAM for SHELL (bash; zsh through its bash completion layer)."""
    function = "_" + re.sub(r"[^A-Za-z0-9]", "_", program)
    commands = _commands(parser)
    cases = []
    for name, sub in commands.items():
        flags, choices = _flags(sub)
        lines = [f"    {name})"]
        for flag, values in choices.items():
            lines.append(f"      if [[ $prev == {flag} ]]; then {_reply(values)}; fi")
        lines.append(f"      if [[ $cur == -* ]]; then {_reply(flags)}; fi")
        positional = _positional_choices(sub)
        if positional:
            lines.append(f"      {_reply(positional)};;")
        else:
            lines.append('      COMPREPLY=($(compgen -f -- "$cur")); return;;')
        cases.append("\n".join(lines))
    top, _ = _flags(parser)
    body = f"""{function}() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
  if (( COMP_CWORD == 1 )); then
    COMPREPLY=($(compgen -W "{_words([*commands, *top])}" -- "$cur")); return
  fi
  case ${{COMP_WORDS[1]}} in
{chr(10).join(cases)}
  esac
}}
complete -o filenames -F {function} {program}
"""
    if shell == "zsh":
        return "autoload -U +X bashcompinit && bashcompinit\n" + body
    return body


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def _flags(parser: argparse.ArgumentParser) -> tuple[list[str], dict[str, list[str]]]:
    flags, choices = [], {}
    for action in parser._actions:
        flags += [string for string in action.option_strings if string.startswith("--")]
        if action.option_strings and action.choices:
            for string in action.option_strings:
                choices[string] = [str(choice) for choice in action.choices]
    return flags, choices


def _positional_choices(parser: argparse.ArgumentParser) -> list[str]:
    return [str(choice) for action in parser._actions if not action.option_strings and action.choices
            for choice in action.choices]


def _reply(words: list[str]) -> str:
    return f'COMPREPLY=($(compgen -W "{_words(words)}" -- "$cur")); return'


def _words(words: list[str]) -> str:
    for word in words:
        if not NAME.match(word):
            raise ValueError(f"{word!r} cannot stand bare in a completion script")
    return " ".join(words)
