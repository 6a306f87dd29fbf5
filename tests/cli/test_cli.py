"""The command-line tools as a user runs them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import yaml

from tests import builders, support
from tests.helm import ROOT, VALUES, Helm, postrender, tool_path


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), input=stdin, text=True, capture_output=True, env={"PATH": tool_path()})


def rendered_stream(helm: Helm, story: str) -> str:
    return helm.template(VALUES / story, post_render=False).stdout


def test_render_files_and_stdin_match_the_post_renderer(helm: Helm, tmp_path: Path) -> None:
    raw = rendered_stream(helm, "story2-pd-qwen3-8b.yaml")
    (tmp_path / "a.yaml").write_text(raw)
    via_file = run("fusion-helm", "render", str(tmp_path / "a.yaml"))
    via_stdin = run("fusion-helm", "render", "-", stdin=raw)
    via_postrender = postrender(stdin=raw)
    assert via_file.returncode == via_stdin.returncode == 0
    assert via_file.stdout == via_stdin.stdout == via_postrender.stdout
    assert via_file.stdout.count("kind: LeaderWorkerSet") == 6


def test_render_several_files_in_order(helm: Helm, tmp_path: Path) -> None:
    for story in ("story1-monolithic-qwen3-8b.yaml", "story3-multinode-deepseek-r1.yaml"):
        (tmp_path / story).write_text(rendered_stream(helm, story))
    result = run("fusion-helm", "render", str(tmp_path / "story1-monolithic-qwen3-8b.yaml"),
                 str(tmp_path / "story3-multinode-deepseek-r1.yaml"))
    names = [d["metadata"]["name"] for d in yaml.safe_load_all(result.stdout)
             if d and d["kind"] not in ("PodGroup", "PodDisruptionBudget", "NetworkPolicy")]
    assert names == ["qwen-inference", "qwen-inference-inference-0", "deepseek-r1-inference",
                     "deepseek-r1-inference-inference-0", "deepseek-r1-inference-inference-1"]


def test_validate_reports_per_file(helm: Helm, tmp_path: Path) -> None:
    (tmp_path / "s4.yaml").write_text(rendered_stream(helm, "story4-pd-multinode-deepseek-r1.yaml"))
    result = run("fusion-helm", "validate", str(tmp_path / "s4.yaml"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{tmp_path / 's4.yaml'}: valid (1 InferenceService(s), 11 generated object(s))\n"


def test_errors_name_the_file_and_print_nothing_else(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    bad.write_text("apiVersion: fusioninfer.io/v1alpha1\nkind: InferenceService\nmetadata: {name: s}\n"
                   "spec: {roles: [{name: a, componentType: worker, replicas: -2}]}\n")
    for command in ("render", "validate"):
        result = run("fusion-helm", command, str(good), str(bad))
        assert result.returncode == 1
        assert result.stdout == ""
        assert result.stderr == (f"fusion-helm: {bad}: InferenceService s: spec.roles[0].replicas: "
                                 "must be >= 0, got -2\n")
    missing = run("fusion-helm", "render", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 1
    assert missing.stderr == f"fusion-helm: {tmp_path / 'nope.yaml'}: cannot read: No such file or directory\n"
    not_text = postrender()
    assert not_text.returncode == 0 and not_text.stdout == ""


def test_help_explains_each_command() -> None:
    assert "Helm 4:  helm plugin install" in postrender("--help").stdout
    top = run("fusion-helm", "--help").stdout
    assert "render" in top and "validate" in top
    assert "Use - for standard input" in run("fusion-helm", "render", "--help").stdout
    assert "Exits non-zero with the first error" in run("fusion-helm", "validate", "--help").stdout
    assert run("fusion-helm").returncode == 2


def test_every_command_has_help() -> None:
    for command in ("render", "validate", "plan", "diff", "status"):
        result = run("fusion-helm", command, "--help")
        assert result.returncode == 0 and result.stdout.startswith(f"usage: fusion-helm {command}"), result.stderr
    assert "CURRENT NEW" in run("fusion-helm", "diff", "--help").stdout


def test_validate_takes_over_as_the_post_renderer_does(tmp_path: Path) -> None:
    lws = ("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: x}\nspec:\n"
           "  leaderWorkerTemplate:\n    size: 2\n    rolloutStrategy: {}\n    workerTemplate:\n"
           "      spec: {containers: [{name: c, image: i}]}\n")
    assert run("fusion-helm", "validate", "-", stdin=lws).returncode == 0  # not annotated: not taken over
    result = run("fusion-helm", "validate", "--take-over-lws", "-", stdin=lws)
    assert result.returncode == 1
    assert result.stderr == ("fusion-helm: standard input: LeaderWorkerSet x: "
                             "spec.leaderWorkerTemplate.rolloutStrategy: unknown field (allowed: leaderTemplate, "
                             "persistentVolumeClaimRetentionPolicy, "
                             "restartPolicy, size, subGroupPolicy, volumeClaimTemplates, workerTemplate)\n")
    post = postrender("--take-over-lws", stdin=lws)
    assert post.stderr == result.stderr.replace("fusion-helm: standard input: ", "fusion-postrender: ")


def test_the_control_plane_says_where_the_upstream_crds_are_missing(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "tests.controlplane", "up", str(tmp_path / "cp")], cwd=ROOT,
                            text=True, capture_output=True, env={**os.environ, "FUSION_SHARED_CRDS": str(tmp_path)})
    assert result.returncode == 1
    assert result.stderr == (f"the upstream CRDs are not at {tmp_path}: set FUSION_SHARED_CRDS to the shared/crds "
                             "directory (a clone beside shared/ finds it by itself)\n")


def test_validate_warns_on_standard_error_and_still_passes(tmp_path: Path) -> None:
    """A routed role without a readiness probe: valid, with a warning by field (tests/cli/test_advice.py)."""
    path = tmp_path / "s.yaml"
    ports = [{"containerPort": 8000, "name": "http"}]
    probe = {"httpGet": {"path": "/health", "port": "http"}}
    prefill = builders.role("p", "prefiller", ports=ports)
    decode = builders.role("d", "decoder", ports=ports, readinessProbe=probe)
    path.write_text(yaml.safe_dump(builders.service(prefill, decode, support.router())))
    result = run("fusion-helm", "validate", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{path}: valid (1 InferenceService(s), ")
    [line] = result.stderr.splitlines()
    assert line.startswith(f"fusion-helm: warning: {path}: InferenceService svc: "
                           "spec.roles[0].template.spec.containers[0].readinessProbe: not set, though the router")


# Every command answers --version, a closed output ends it quietly, a silent API server is one line.

def test_every_command_tells_its_version() -> None:
    from importlib.metadata import version

    for command in ("fusion-helm", "fusion-postrender", "fusion-krm"):
        answer = run(command, "--version")
        assert (answer.returncode, answer.stdout, answer.stderr) == (0, f"{command} {version('fusioninfer-helm')}\n",
                                                                     ""), command


def closed_output(*args: str, stdin: Path | None = None) -> subprocess.CompletedProcess[str]:
    """ARGS run with standard output a pipe nobody reads any more (`… | head` once head has exited)."""
    read, write = os.pipe()
    os.close(read)
    try:
        with open(stdin or os.devnull) as given:
            return subprocess.run(list(args), stdin=given, stdout=write, stderr=subprocess.PIPE, text=True,
                                  env={"PATH": tool_path()})
    finally:
        os.close(write)


def test_a_reader_that_goes_away_ends_a_command_quietly(tmp_path: Path) -> None:
    """`fusion-helm plan -o json | head` once head has read enough: no BrokenPipeError traceback, and the
    status a shell gives a command SIGPIPE stopped."""
    story = VALUES / "story4-pd-multinode-deepseek-r1.yaml"
    stream = tmp_path / "resource-list.yaml"
    stream.write_text(yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": []}))
    for args, given in ((("fusion-helm", "plan", str(story), "--gpus", "64", "-o", "json"), None),
                        (("fusion-helm", "render", str(story)), None), (("fusion-postrender",), story),
                        (("fusion-krm",), stream)):
        ended = closed_output(*args, stdin=given)
        assert (ended.returncode, ended.stderr) == (141, ""), args


def test_status_of_an_api_server_that_does_not_answer_is_one_line(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": "llm"}}]}))
    answer = run("fusion-helm", "status", "qwen", "--kubeconfig", str(kubeconfig))
    assert (answer.returncode, answer.stdout) == (1, "")
    assert answer.stderr == "fusion-helm: cannot reach the API server at https://127.0.0.1:1: [Errno 111] " \
                            "Connection refused\n"


def test_status_gives_up_on_an_api_server_that_takes_the_connection_and_never_answers(tmp_path: Path) -> None:
    """Within its --request-timeout, in one line; it waited for ever before."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{silent.getsockname()[1]}",
                                                   "insecure-skip-tls-verify": True}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": "llm"}}]}))
        answer = subprocess.run(["fusion-helm", "status", "qwen", "--kubeconfig", str(kubeconfig), "--request-timeout",
                                 "1"], capture_output=True, text=True, timeout=60, env={"PATH": tool_path()})
    assert (answer.returncode, answer.stdout) == (1, ""), answer.stderr
    assert answer.stderr.startswith("fusion-helm: cannot reach the API server at https://127.0.0.1:"), answer.stderr
    assert "timed out" in answer.stderr and answer.stderr.count("\n") == 1, answer.stderr


def test_shell_completion_offers_commands_flags_and_choices(tmp_path: Path) -> None:
    script = run("fusion-helm", "completion", "bash").stdout

    def completed(*words: str) -> list[str]:
        probe = tmp_path / "probe.sh"
        probe.write_text(f'{script}\nCOMP_WORDS=({" ".join(repr(w) for w in words)})\n'
                         f"COMP_CWORD={len(words) - 1}\n_fusion_helm\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
        done = subprocess.run(["bash", str(probe)], capture_output=True, text=True, check=True, cwd=tmp_path)
        return done.stdout.split()

    assert completed("fusion-helm", "pl") == ["plan", "plugin-dir"]
    assert completed("fusion-helm", "plan", "--g") == ["--gpus", "--gpus-per-node"]
    assert completed("fusion-helm", "plan", "-o", "") == ["tree", "json"]
    assert completed("fusion-helm", "validate", "--take-over-layout", "r") == ["replica", "role"]
    assert completed("fusion-helm", "completion", "") == ["bash", "zsh"]
    assert run("fusion-helm", "completion", "zsh").stdout.startswith("autoload -U +X bashcompinit")


def _said(result: subprocess.CompletedProcess[str], command: str) -> list[str]:
    """What a command printed on standard error, its own prefixes left out."""
    prefixes = (f"{command}: warning: standard input: ", f"{command}: standard input: ", f"{command}: warning: ",
                f"{command}: ")
    return [next((line.removeprefix(p) for p in prefixes if line.startswith(p)), line)
            for line in result.stderr.splitlines()]


def test_validate_and_the_post_renderer_agree_on_every_example_and_mistake(helm4: Helm) -> None:
    """`fusion-helm validate` is how a user reads a refusal (and the warnings) without installing: on each
    example of values/ (as helm renders it), each bad input the post-renderer refuses and each routing
    mistake the expansion refuses, it says what the post-renderer says, and exits as it does."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.expand.test_router import ERRORS
    from tests.model.test_bad_input import CASES

    streams = {f"example {path.stem}": helm4.template(path, post_render=False).stdout
               for path in sorted(VALUES.glob("*.yaml"))}
    streams |= {f"bad input: {case}": text for case, (text, _) in CASES.items()}
    streams |= {f"routing: {case}": yaml.safe_dump(builders.service(*roles)) for case, (roles, _, _) in ERRORS.items()}

    def both(text: str) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
        return run("fusion-helm", "validate", "-", stdin=text), postrender(stdin=text)

    with ThreadPoolExecutor(2) as pool:
        results = dict(zip(streams, pool.map(both, streams.values()), strict=True))
    disagreements = {case: (_said(validated, "fusion-helm"), _said(rendered, "fusion-postrender"))
                     for case, (validated, rendered) in results.items()
                     if validated.returncode != rendered.returncode
                     or _said(validated, "fusion-helm") != _said(rendered, "fusion-postrender")}
    assert not disagreements, disagreements
    refused = sum(rendered.returncode != 0 for _, rendered in results.values())
    warned = sum(validated.returncode == 0 and bool(validated.stderr) for validated, _ in results.values())
    assert refused >= len(CASES) + len(ERRORS) and warned >= 1  # every mistake refused; an example warned of


def test_a_document_of_someone_else_s_is_passed_through_unread_by_the_commands_too() -> None:
    """The advice the commands add reads the services and what the expansion wrote, never another
    document: one YAML would nest without end (a self-referencing anchor) passes through as written, as
    the library passes it, rather than refusing the stream once every service in it is expanded."""
    foreign = "---\nkey: &a [x, *a]\n"
    stream = yaml.safe_dump(builders.service(builders.role("w", "worker"))) + foreign
    rendered = postrender(stdin=stream)
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stdout.endswith(foreign)
    assert run("fusion-helm", "validate", "-", stdin=stream).returncode == 0
