"""Precise prefix-cache routing on the control plane: llm-d-router's pickers (two, each in its pod's network,
tests/controlplane/serving.py) with the configuration rendered for strategy precise-prefix-cache, in front of
llm-d's simulator publishing its KV-cache events as the rendered command line tells vLLM to.

The events reach every picker: a request whose prefix one pod holds goes to that pod through either picker,
also the one that never routed it. After that pod evicts the prefix (cache pressure: other prompts sent to
it directly) and another pod takes it, both pickers follow; the same pickers guessing from where they sent
earlier requests (the approximate scorer: the rendered configuration without the engines' events) keep
sending it where it no longer is — the protection shown missing."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm.base.labels import LABEL_COMPONENT_TYPE
from tests.controlplane.clients import completion, gateway
from tests.controlplane.cluster import Cluster, ready, ready_pods, release
from tests.controlplane.pickers import GRPC_PORT, kubeconfig_for, running, serving
from tests.controlplane.scenarios import serving_values
from tests.controlplane.serving import SERVING, ServedPod, ServingKubelet
from tests.engines import VERSIONS
from tests.helm import VALUES, Helm

ENGINES = 3
CACHE_BLOCKS = 24
"""Each simulated engine's KV cache, in blocks of 16 tokens: room for two prompts of PROMPT_WORDS (the
simulator's tokenizer makes a token of each word), not three."""
PROMPT_WORDS = 160
EVENTS_FLUSHED = 1.0
"""Seconds by which every picker has an engine's events (sent as each request is admitted or evicts)."""
GUESSES_EXPIRED = 2.5
"""Seconds after which a picker's own record of where it sent a request (its speculative indexing, 2 s)
has gone, and only the engines' events say what each holds."""


def prompt(family: str, words: int = PROMPT_WORDS) -> str:
    return " ".join(f"{family}{index}" for index in range(words))


def destination(address: str, model: str, text: str) -> str:
    status, headers, body = completion(address, {"model": model, "prompt": text, "max_tokens": 2}, timeout=60)
    assert status == 200, (status, body)
    return headers["x-stand-in-destination"]


def straight_to(pod: ServedPod, model: str, text: str) -> None:
    """TEXT sent to POD's engine itself, past every picker: what the pickers learn of it is the engine's."""
    status, _, body = completion(f"{pod.address}:8000", {"model": model, "prompt": text, "max_tokens": 2},
                                 timeout=60)
    assert status == 200, (status, body)


def approximate(config: str) -> str:
    """CONFIG (the rendered precise one) as the approximate scorer runs it: the same scorers and weights,
    without the engines' events (no producers, no data layer, the prefix scorer's own producer)."""
    parsed = yaml.safe_load(config)
    fed = {"token-producer", "endpoint-notification-source", "precise-prefix-cache-producer"}
    parsed["plugins"] = [{"type": plugin["type"]} if plugin["type"] == "prefix-cache-scorer" else plugin
                         for plugin in parsed["plugins"] if plugin["type"] not in fed]
    del parsed["dataLayer"]
    return str(yaml.safe_dump(parsed))


@contextlib.contextmanager
def gateways(addresses: list[str], workdir: Path) -> Iterator[list[str]]:
    """A gateway stand-in in front of each picker at ADDRESSES: theirs, in order."""
    with contextlib.ExitStack() as stack:
        for index in range(len(addresses)):
            (workdir / str(index)).mkdir(parents=True)
        yield [stack.enter_context(gateway(f"{address}:{GRPC_PORT}", workdir / str(index)))
               for index, address in enumerate(addresses)]


@pytest.mark.cluster
def test_every_picker_follows_what_each_engine_reports_it_holds(
        cluster: Cluster, helm: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    namespace = f"precise-helm{helm.major}"
    values = serving_values(VALUES / "story1-monolithic-qwen3-8b.yaml", tmp_path, strategy="precise-prefix-cache",
                            endpointPicker={"generation": "llm-d-router", "replicas": 2, "podAnnotations": SERVING})
    spec: dict[str, Any] = yaml.safe_load(values.read_text())
    worker = spec["roles"][0]
    worker["replicas"] = ENGINES
    worker["template"]["spec"]["containers"][0]["image"] = f"vllm/vllm-openai:v{VERSIONS['VLLM_VERSION']}"
    serving_kubelet.engine_options[worker["name"]] = [f"--kv-cache-size={CACHE_BLOCKS}", "--block-size=16"]
    values.write_text(yaml.safe_dump(spec))
    args = worker["template"]["spec"]["containers"][0]["args"]
    model = str(args[args.index("--model") + 1])
    try:
        with release(cluster, helm, "svc", namespace) as installed:
            installed.install(values)
            manifest = {f"{o['kind']}/{o['metadata']['name']}": o for o in installed.manifest()}
            pods = ready_pods(cluster, namespace, ENGINES + 2)
            pickers = sorted(pod.status.pod_ip for pod in pods
                             if (pod.metadata.labels or {}).get(LABEL_COMPONENT_TYPE) == "router" and ready(pod))
            engines = {f"{pod.address}:8000": pod for pod in serving_kubelet.served(namespace)
                       if pod.role == worker["name"]}
            assert len(pickers) == 2 and len(engines) == ENGINES, (pickers, list(engines))
            with gateways(pickers, tmp_path / "gateways") as (first, second):
                # Routed by the first picker; the second, which never routed it, follows the events.
                held = destination(first, model, prompt("a") + " turn 0")
                time.sleep(EVENTS_FLUSHED)
                for turn in range(1, 4):
                    assert destination(second, model, prompt("a") + f" turn {turn}") == held
                    assert destination(first, model, prompt("a") + f" again {turn}") == held

                # The holder evicts it (other prompts fill its cache), and another engine takes it.
                moved = evict_and_move(engines, held, model, "a")
                time.sleep(GUESSES_EXPIRED)
                followed = [destination(address, model, prompt("a") + f" later {turn}")
                            for turn in range(3) for address in (first, second)]
                assert followed == [moved] * 6, (held, moved, followed)

            # The protection removed: the same pickers' scorers, guessing from where they sent requests.
            [deployment] = [o for key, o in manifest.items() if key.startswith("Deployment/")]
            [configmap] = [o for key, o in manifest.items() if key.startswith("ConfigMap/") and key.endswith("-epp")]
            guessing = {**configmap, "data": {"config.yaml": approximate(configmap["data"]["config.yaml"])}}
            account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
            kubeconfig = kubeconfig_for(cluster, namespace, account, tmp_path / "kubeconfig")
            workdir = tmp_path / "approximate"
            workdir.mkdir()
            with running(deployment, guessing, namespace, kubeconfig, workdir, offset=100) as picker:
                serving(picker)
                with gateway(picker.grpc, workdir) as address:
                    guessed = destination(address, model, prompt("b") + " turn 0")
                    moved = evict_and_move(engines, guessed, model, "b")
                    time.sleep(EVENTS_FLUSHED)
                    stale = [destination(address, model, prompt("b") + f" later {turn}") for turn in range(3)]
                    assert moved not in stale and stale == [guessed] * 3, (guessed, moved, stale)
    finally:
        del serving_kubelet.engine_options[worker["name"]]


def evict_and_move(engines: dict[str, ServedPod], holder: str, model: str, family: str) -> str:
    """The prefix FAMILY evicted from HOLDER's cache (three other prompts of its size sent to it) and put in
    another engine's; that engine's address."""
    for filler in range(3):
        straight_to(engines[holder], model, prompt(f"f{family}{filler}x"))
    other = next(address for address in sorted(engines) if address != holder)
    straight_to(engines[other], model, prompt(family) + " elsewhere")
    return other
