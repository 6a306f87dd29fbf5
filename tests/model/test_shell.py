"""The reader of a script's last command (fusion_helm/model/shell.py), held to what real shells do: each
script is run by dash and bash with a program named ``vllm`` on the PATH that records its arguments and
its process id, so a reading is right only where the shell really execs that command (same process)
with those words (an expansion's text standing for its value)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fusion_helm.errors import InvalidSpec
from fusion_helm.model.engine import server_command
from fusion_helm.model.shell import LastExec, last_exec

SHELLS = [shell for shell in ("dash", "bash") if shutil.which(shell)]
ARGUMENTS = ("--port", "9000")
"""What the tests pass as the script's own arguments."""

# (script, its last exec's words as read, whether "$@" is their last, each expansion's value when run)
READABLE = [
    ('exec vllm serve m "$@"', ("vllm", "serve", "m"), True, {}),
    ("exec vllm serve m $@", ("vllm", "serve", "m"), True, {}),
    ("set -e\nexec vllm serve --y=1\n\n# done\n", ("vllm", "serve", "--y=1"), False, {}),
    ("true && exec vllm serve \\\n m", ("vllm", "serve", "m"), False, {}),
    ('true | true; exec vllm serve "m;n" "$@"', ("vllm", "serve", "m;n"), True, {}),
    ("exec vllm serve m --x='a|b'", ("vllm", "serve", "m", "--x=a|b"), False, {}),
    ('exec vllm serve --host $(printf "%s" "a)b") "$@"', ("vllm", "serve", "--host", '$(printf "%s" "a)b")'), True,
     {'$(printf "%s" "a)b")': "a)b"}),
    ('exec vllm serve --port $((8000 + 1)) "$@"', ("vllm", "serve", "--port", "$((8000 + 1))"), True,
     {"$((8000 + 1))": "8001"}),
    ('exec vllm serve `printf m` "$@"', ("vllm", "serve", "`printf m`"), True, {"`printf m`": "m"}),
    ('exec vllm serve "${MODEL:-a b}" "$@"', ("vllm", "serve", "${MODEL:-a b}"), True, {"${MODEL:-a b}": "a b"}),
    ('X=$(printf "%s" ")"); exec vllm serve "$X" "$@"', ("vllm", "serve", "$X"), True, {"$X": ")"}),
    ('exec vllm serve m "$@" >/dev/null 2>&1', ("vllm", "serve", "m"), True, {}),
    ('M=m exec vllm serve a#b "$@" # the model', ("vllm", "serve", "a#b"), True, {}),
    ('cat >/dev/null <<-EOF\n\texec nothing )\n\tEOF\nexec vllm serve "a\\"b" \'c\\d\' "$@"',
     ("vllm", "serve", 'a"b', "c\\d"), True, {}),
    ('exec vllm serve m "$@" <<EOF\n(\nEOF\n', ("vllm", "serve", "m"), True, {}),
    ('sleep 0 & exec vllm serve m "$@"', ("vllm", "serve", "m"), True, {}),
]

UNREADABLE = [
    ("vllm serve m", "its last command is 'vllm', no exec"),
    ("exec vllm serve m | cat", "its last command is a pipeline ('|')"),
    ("exec vllm serve m &", "its last command runs in the background ('&')"),
    ("(exec vllm serve m)", "its last command is a subshell or compound command ('(')"),
    ("if true; then exec vllm serve m; fi", "its last command is a compound command ('fi')"),
    ("exec vllm serve m; echo done", "its last command is 'echo', no exec"),
    ('eval "exec vllm serve m"', "its last command is 'eval', no exec"),
    ("exec vllm serve 'm", "it has an unclosed '"),
    ("exec vllm serve $(printf m", "it has an unclosed '$('"),
    ("exec", "its last command execs no command"),
]


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding a ``vllm`` that records its arguments and process id in $PROBE_OUT."""
    directory = tmp_path_factory.mktemp("probe")
    program = directory / "vllm"
    program.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                       "open(os.environ['PROBE_OUT'], 'w').write(json.dumps([os.getpid(), sys.argv[1:]]))\n")
    program.chmod(0o755)
    return directory


def run(shell: str, script: str, probe: Path, tmp_path: Path) -> tuple[bool, list[str]] | None:
    """Whether SHELL running SCRIPT (with ARGUMENTS) exec'd the probe in its own process, and the words it
    got; None where the probe never ran."""
    out = tmp_path / "out.json"
    environment = {"PATH": f"{probe}:{os.environ['PATH']}", "PROBE_OUT": str(out)}
    process = subprocess.Popen([shell, "-c", script, "launch", *ARGUMENTS], env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    process.wait(timeout=30)
    for _ in range(100):  # a background or piped probe may finish after the shell
        if out.exists() and out.read_text():
            pid, words = json.loads(out.read_text())
            return pid == process.pid, words
        if process.returncode is not None and "&" not in script and "|" not in script:
            break
        subprocess.run(["sleep", "0.05"], check=True)
    return None


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize(("script", "words", "passes", "values"), READABLE)
def test_the_words_read_are_those_the_shell_execs(shell: str, script: str, words: tuple[str, ...], passes: bool,
                                                  values: dict[str, str], probe: Path, tmp_path: Path) -> None:
    assert last_exec(script) == LastExec(words, passes)
    ran = run(shell, script, probe, tmp_path)
    assert ran is not None and ran[0], "the shell did not exec the command in its own process"
    expected = [values.get(word, word) for word in words[1:]] + (list(ARGUMENTS) if passes else [])
    assert ran[1] == expected


@pytest.mark.parametrize(("script", "unread"), UNREADABLE)
def test_a_last_command_that_is_no_plain_exec_is_said_why(script: str, unread: str) -> None:
    # Not run: a shell may still exec some of these (bash execs a -c script's last simple command), but
    # none ends by exec'ing its engine with "$@" last, the one way flags given as its arguments reach it.
    assert last_exec(script) == LastExec(None, False, unread)


@pytest.mark.parametrize("shell", SHELLS)
def test_arguments_not_last_are_read_as_not_passed_on_last(shell: str, probe: Path, tmp_path: Path) -> None:
    script = 'exec vllm serve "$@" --x 1'
    assert last_exec(script) == LastExec(("vllm", "serve", "--x", "1"), False)
    assert run(shell, script, probe, tmp_path) == (True, ["serve", *ARGUMENTS, "--x", "1"])


def test_a_refusal_names_the_script_s_real_cause() -> None:
    server = server_command({"command": ["sh", "-c", "exec vllm serve m | tee /log"]}, (), "InferenceService s", "c")
    with pytest.raises(InvalidSpec) as error:
        server.appended(["--port=1"], "the sidecar moves its port")
    assert error.value.path == "c.command[2]"
    assert "cannot pass flags to its engine (its last command is a pipeline ('|'))" in str(error.value)
