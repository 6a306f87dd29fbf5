"""Precise prefix-cache routing on the control plane: llm-d-router's pickers (two, each in its pod's network,
tests/controlplane/serving.py) with the configuration rendered for strategy precise-prefix-cache, in front of
llm-d's simulator publishing its KV-cache events as the rendered command line tells vLLM to.

The events reach every picker: a request whose prefix one pod holds goes to that pod through either picker,
also the one that never routed it. After that pod evicts the prefix (cache pressure: other prompts sent to
it directly) and another pod takes it, both pickers follow; the same pickers guessing from where they sent
earlier requests (the approximate scorer: the rendered configuration without the engines' events) keep
sending it where it no longer is — the protection shown missing. On a prefill/decode service the same holds
for each of the picker's profiles, each by its own pool's events: the prefill pod and the decode pod."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from fusion_helm.base.labels import LABEL_COMPONENT_TYPE
from tests.controlplane.clients import completion, gateway
from tests.controlplane.cluster import ONE_HELM, Cluster, ready, ready_pods, release
from tests.controlplane.pickers import GRPC_PORT, kubeconfig_for, running, serving
from tests.controlplane.scenarios import engine_port, serving_values
from tests.controlplane.serving import SERVING, ServedPod, ServingKubelet
from tests.engines import VERSIONS
from tests.helm import VALUES, Helm

CACHE_BLOCKS = 24
"""Each simulated engine's KV cache, in blocks of 16 tokens: room for two prompts of PROMPT_WORDS (the
simulator's tokenizer makes a token of each word), not three."""
PROMPT_WORDS = 160
EVENTS_FLUSHED = 1.0
"""Seconds by which every picker has an engine's events (sent as each request is admitted or evicts)."""
GUESSES_EXPIRED = 2.5
"""Seconds after which a picker's own record of where it sent a request (its speculative indexing, 2 s)
has gone, and only the engines' events say what each holds."""

Route = tuple[str, ...]
"""Where a request went: its pod's address (and, prefill/decode, its prefill pod's before it)."""


def prompt(family: str, words: int = PROMPT_WORDS) -> str:
    return " ".join(f"{family}{index}" for index in range(words))


@dataclass
class PreciseService:
    """A service installed with strategy precise-prefix-cache, its two pickers each behind a gateway
    stand-in, and its engines by role and by the address:port the pickers route to."""

    namespace: str
    manifest: dict[str, dict[str, Any]]
    model: str
    gateways: list[str]
    engines: dict[str, dict[str, ServedPod]]
    """Role → the address:port requests reach it by → its pod."""

    def route(self, address: str, text: str) -> Route:
        """TEXT sent through the gateway at ADDRESS: where it went."""
        status, headers, body = completion(address, {"model": self.model, "prompt": text, "max_tokens": 2},
                                           timeout=60)
        assert status == 200, (status, body)
        prefiller = headers.get("x-stand-in-prefiller")
        return (prefiller, headers["x-stand-in-destination"]) if prefiller else (headers["x-stand-in-destination"],)

    def evict_and_move(self, route: Route, family: str) -> Route:
        """The prefix FAMILY evicted from the cache of each engine on ROUTE (three other prompts of its size
        sent to it) and put in another engine of its role: where it is now."""
        moved = []
        for held in route:
            [engines] = [engines for engines in self.engines.values() if held in engines]
            for filler in range(3):
                straight_to(engines[held], self.model, prompt(f"f{family}{filler}x"))
            other = next(address for address in sorted(engines) if address != held)
            straight_to(engines[other], self.model, prompt(family) + " elsewhere")
            moved.append(other)
        return tuple(moved)


def straight_to(pod: ServedPod, model: str, text: str) -> None:
    """TEXT sent to POD's engine itself, past every picker and sidecar: what the pickers learn of it is the
    engine's."""
    status, _, body = completion(f"{pod.address}:{engine_port(pod)}",
                                 {"model": model, "prompt": text, "max_tokens": 2}, timeout=60)
    assert status == 200, (status, body)


@contextlib.contextmanager
def precise_service(cluster: Cluster, helm: Helm, serving_kubelet: ServingKubelet, tmp_path: Path, base: Path,
                    replicas: dict[str, int], namespace: str) -> Iterator[PreciseService]:
    """BASE's service with REPLICAS of its serving roles, each engine a vLLM release with the render server
    simulated with a small KV cache, routed by strategy precise-prefix-cache through two pickers in pods."""
    values = serving_values(base, tmp_path, strategy="precise-prefix-cache",
                            endpointPicker={"generation": "llm-d-router", "replicas": 2, "podAnnotations": SERVING})
    spec: dict[str, Any] = yaml.safe_load(values.read_text())
    roles = [role for role in spec["roles"] if role["componentType"] != "router"]
    for role in roles:
        role["replicas"] = replicas[role["name"]]
        role["template"]["spec"]["containers"][0]["image"] = f"vllm/vllm-openai:v{VERSIONS['VLLM_VERSION']}"
        serving_kubelet.engine_options[role["name"]] = [f"--kv-cache-size={CACHE_BLOCKS}", "--block-size=16"]
    values.write_text(yaml.safe_dump(spec))
    args = roles[0]["template"]["spec"]["containers"][0]["args"]
    try:
        with release(cluster, helm, "svc", namespace) as installed:
            installed.install(values)
            pods = ready_pods(cluster, namespace, sum(replicas.values()) + 2)
            pickers = sorted(pod.status.pod_ip for pod in pods
                             if (pod.metadata.labels or {}).get(LABEL_COMPONENT_TYPE) == "router" and ready(pod))
            served = serving_kubelet.served(namespace)
            engines = {name: {f"{pod.address}:8000": pod for pod in served if pod.role == name} for name in replicas}
            assert len(pickers) == 2 and {name: len(pods) for name, pods in engines.items()} == replicas, (
                pickers, engines)
            with contextlib.ExitStack() as stack:
                gateways = []
                for index, address in enumerate(pickers):
                    workdir = tmp_path / f"gateway-{index}"
                    workdir.mkdir()
                    gateways.append(stack.enter_context(gateway(f"{address}:{GRPC_PORT}", workdir)))
                manifest = {f"{o['kind']}/{o['metadata']['name']}": o for o in installed.manifest()}
                yield PreciseService(namespace, manifest, str(args[args.index("--model") + 1]), gateways, engines)
    finally:
        for role in roles:
            del serving_kubelet.engine_options[role["name"]]


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
def guessing(cluster: Cluster, service: PreciseService, workdir: Path) -> Iterator[str]:
    """The service's picker with the approximate scorer (the protection removed), behind a gateway
    stand-in: its address."""
    [deployment] = [o for key, o in service.manifest.items() if key.startswith("Deployment/")]
    [configmap] = [o for key, o in service.manifest.items() if key.startswith("ConfigMap/") and key.endswith("-epp")]
    config = {**configmap, "data": {"config.yaml": approximate(configmap["data"]["config.yaml"])}}
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    workdir.mkdir()
    kubeconfig = kubeconfig_for(cluster, service.namespace, account, workdir / "kubeconfig")
    with running(deployment, config, service.namespace, kubeconfig, workdir, offset=100) as picker:
        serving(picker)
        with gateway(picker.grpc, workdir) as address:
            yield address


def follows_the_engines(cluster: Cluster, service: PreciseService, tmp_path: Path,
                        check: Callable[[Route], None]) -> None:
    """What both the monolithic and the prefill/decode test prove, on SERVICE: each request's route (CHECKed
    first) follows what the engines report they hold, through either picker; the approximate scorer's
    does not."""
    first, second = service.gateways
    # Routed by the first picker; the second, which never routed it, follows the events.
    held = service.route(first, prompt("a") + " turn 0")
    check(held)
    time.sleep(EVENTS_FLUSHED)
    for turn in range(1, 4):
        assert service.route(second, prompt("a") + f" turn {turn}") == held
        assert service.route(first, prompt("a") + f" again {turn}") == held

    # The holders evict it (other prompts fill their caches), and other engines take it.
    moved = service.evict_and_move(held, "a")
    time.sleep(GUESSES_EXPIRED)
    followed = [service.route(address, prompt("a") + f" later {turn}")
                for turn in range(3) for address in (first, second)]
    assert followed == [moved] * 6, (held, moved, followed)

    # The protection removed: the same pickers' scorers, guessing from where they sent requests.
    with guessing(cluster, service, tmp_path / "approximate") as address:
        guessed = service.route(address, prompt("b") + " turn 0")
        moved = service.evict_and_move(guessed, "b")
        time.sleep(EVENTS_FLUSHED)
        stale = [service.route(address, prompt("b") + f" later {turn}") for turn in range(3)]
        assert moved not in stale and stale == [guessed] * 3, (guessed, moved, stale)


@ONE_HELM
@pytest.mark.cluster
def test_every_picker_follows_what_each_engine_reports_it_holds(
        cluster: Cluster, helm: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    with precise_service(cluster, helm, serving_kubelet, tmp_path, VALUES / "story1-monolithic-qwen3-8b.yaml",
                         {"inference": 3}, "precise") as service:
        follows_the_engines(cluster, service, tmp_path, lambda route: None)


@ONE_HELM
@pytest.mark.cluster
def test_prefill_and_decode_pods_are_each_chosen_by_what_their_pool_reports(
        cluster: Cluster, helm: Helm, serving_kubelet: ServingKubelet, tmp_path: Path) -> None:
    """Both pools publish their events to both pickers: the prefill profile chooses by the prefill pods',
    the decode profile by the decode pods'."""
    with precise_service(cluster, helm, serving_kubelet, tmp_path, VALUES / "router-pd-qwen3-8b.yaml",
                         {"prefill": 2, "decode": 2}, "precise-pd") as service:
        def prefilled_apart(route: Route) -> None:
            prefiller, decoder = route
            assert prefiller in service.engines["prefill"] and decoder in service.engines["decode"], route
        follows_the_engines(cluster, service, tmp_path, prefilled_apart)
