"""Fuzz inputs: seed objects mutated as data (fields set to odd values, removed, duplicated, renamed)
and then as text (tags, line endings, directives, anchors, flow style, stray characters), mixed with
documents we do not own. Each case is a (stream, take_over_every_leader_worker_set) pair, reproducible
from its seed."""

from __future__ import annotations

import base64
import copy
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from fusion_helm.limits import MAX_REPLICAS
from tests.builders import WAITING_REQUESTS, every_bootstrap
from tests.helm import ROOT

VALUES = ROOT / "values"


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


INTERESTING: list[Any] = [
    None, True, False, 0, -1, 1, 2, 7, 2**31, 2**31 - 1, -(2**31) - 1, 2**63, 2**64, 10**30, 1.5, -0.0, 1e300,
    "", "x", "y", "n", "N", "on", "off", "null", "~", "1e3", "0o17", "0x1F", "08", ".inf", ".nan", "2020-01-01",
    "2001-12-14T21:59:43Z", "1:20", "<<", "a" * 64, "a" * 300, "line\nbreak", "x\u2028y", "tab\t", "\x7f", "é",
    "500m", "1e999999999", "-1", "16Gi", "lots", "Always", "None", "RoleRestart", "worker", "prefiller", "decoder",
    "router", "group", "role", "volcano", "inference.networking.x-k8s.io/v1alpha2", "http", "sh", ["sh", "-c"],
    [], [None], [{}], ["a", 1], {}, {"k": "v"}, {"k": 1}, {"nested": {"deeper": [1, {"x": None}]}},
    {"containerPort": 0}, {"containerPort": 8000, "name": "http"}, _nested(60), _nested(250),
    MAX_REPLICAS, MAX_REPLICAS + 1, 1000,
    "kind: EndpointPickerConfig\nx: " + "[" * 5000 + "]" * 5000,
    "kind: EndpointPickerConfig\na: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"b{i}: &b{i} [{', '.join(['*a' if i == 0 else f'*b{i - 1}'] * 9)}]\n" for i in range(8)),
    "kind: EndpointPickerConfig\nplugins: !!int x\n", "kind: [EndpointPickerConfig", "- a\n- b\n",
    # shell scripts a container may run: substitutions, arithmetic, here-documents, nesting, unclosed forms
    'exec vllm serve --host $(hostname -i) --port $((8000 + 1)) "$@"', "exec vllm serve $( `x` ${y:-$(z)} ) \"$@\"",
    "cat <<-E\n\tx )\n\tE\nexec vllm serve \"$@\" 2>&1", "exec vllm $((1+", "exec vllm '", "$(" * 40,
]
TAGS = ["!!int ", "!!bool ", "!!float ", "!!null ", "!!str ", "!!timestamp ", "!!binary ", "!custom ",
        "!!python/name:os.system ", "!!set ", "!!map ", "!!seq ", "! "]
FOREIGN = [
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config}\ndata: {a: !!int word, b: y}\n",
    "apiVersion: v1\nkind: Service\nmetadata: {name: svc, namespace: [a]}\nspec: {selector: {app: x}}\n",
    "- just\n- a list\n",
    "plain scalar\n",
    "# only a comment\n",
    "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {k: !!binary aGVsbG8=}\n",
    "kind: ConfigMap\nmetadata:\n  name: deep\ndata: " + "[" * 300 + "]" * 300 + "\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\n",
    "key: &a [x, *a]\n",
]


@dataclass(frozen=True)
class Case:
    seed: int
    stream: str
    take_over: bool
    mutations: tuple[str, ...]


def seeds() -> list[dict[str, Any]]:
    """The seed objects: each story and the router example as an InferenceService, and LeaderWorkerSets."""
    out = []
    for path in sorted(VALUES.glob("*.yaml")):
        values = yaml.safe_load(path.read_text())
        spec = {key: value for key, value in values.items() if key != "name"}
        out.append({"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
                    "metadata": {"name": values.get("name", "svc"), "namespace": "llm", "labels": {"team": "a"}},
                    "spec": spec})
        for role in spec["roles"]:
            if role["componentType"] == "router":  # and the same router with a verbatim picker config
                verbatim = copy.deepcopy(out[-1])
                router = next(r for r in verbatim["spec"]["roles"] if r["componentType"] == "router")
                router.pop("strategy", None)
                router["endpointPickerConfig"] = ("apiVersion: inference.networking.x-k8s.io/v1alpha1\n"
                                                  "kind: EndpointPickerConfig\nplugins:\n- type: queue-scorer\n")
                # A role KEDA scales on the picker's queue, or at zero, needs the picker to queue.
                elastic = any("prometheus" in (r.get("autoscaling") or {}) for r in spec["roles"])
                if elastic:
                    router["endpointPickerConfig"] += "featureGates:\n- flowControl\n"
                out.append(verbatim)
                # and with each other picker generation's configuration (prefill/decode: the one with a sidecar;
                # a role at zero: the one whose flow control holds requests meanwhile)
                original = out[-2]
                disaggregated = any(r["componentType"] in ("prefiller", "decoder") for r in spec["roles"])
                for pool, generation in (("inference.networking.k8s.io/v1", "llm-d-router"),
                                         ("inference.networking.x-k8s.io/v1alpha2", "gie-v1.0"))[
                                             :1 if disaggregated or elastic else 2]:
                    other = copy.deepcopy(original)
                    router = next(r for r in other["spec"]["roles"] if r["componentType"] == "router")
                    router["poolAPIVersion"] = pool
                    router.setdefault("endpointPicker", {})["generation"] = generation
                    out.append(other)
    # story 4 in the role layout, decode rolling and autoscaled
    by_role = copy.deepcopy(next(o for o in out if o["metadata"]["name"] == "deepseek-r1-disagg"))
    by_role["spec"]["layout"] = "role"
    decode = by_role["spec"]["roles"][1]
    del decode["replicas"]
    decode["rollout"] = {"maxUnavailable": "25%", "maxSurge": 1, "partition": 1}
    decode["autoscaling"] = {"minReplicas": 1, "maxReplicas": 4, "metrics": [
        {"type": "Pods", "pods": {"metric": {"name": "vllm:num_requests_waiting"},
                                  "target": {"type": "AverageValue", "averageValue": "5"}}}]}
    out.append(by_role)
    # story 2 in the disaggregated layout, behind its router, decode rolling with a surge and autoscaled
    by_set = copy.deepcopy(next(o for o in out if o["metadata"]["name"] == "deepseek-r1-disagg"))
    by_set["spec"]["layout"] = "disaggregated"
    by_set["spec"]["roles"][1] = {**by_set["spec"]["roles"][1], "rollout": {"maxSurge": 1, "maxUnavailable": 0}}
    out.append(by_set)
    routed = copy.deepcopy(next(o for o in out if any(r["componentType"] == "router" for r in o["spec"]["roles"])
                                and any(r["componentType"] == "prefiller" for r in o["spec"]["roles"])))
    routed["spec"]["layout"] = "disaggregated"
    decode = next(r for r in routed["spec"]["roles"] if r["componentType"] == "decoder")
    decode.pop("replicas", None)
    decode["autoscaling"] = {"minReplicas": 1, "maxReplicas": 3, "metrics": WAITING_REQUESTS}
    out.append(routed)
    # story 4 placed: a queue, a priority, the whole service within a spine, decode within a rack, prefill anywhere
    placed = copy.deepcopy(next(o for o in out if o["metadata"]["name"] == "deepseek-r1-disagg"))
    placed["spec"]["schedulingStrategy"] = {"queue": "team-a", "priorityClassName": "inference-high"}
    placed["spec"]["gangSchedule"] = {"networkTopology": {"mode": "hard", "highestTierName": "rack"},
                                      "serviceNetworkTopology": {"mode": "hard", "highestTierAllowed": 2}}
    placed["spec"]["roles"][0]["networkTopology"] = {"mode": "none"}
    out.append(placed)
    # the router example monitored, multi-node decode, the picker with its own securityContext and resources
    monitored = copy.deepcopy(routed)
    monitored["spec"]["monitoring"] = {"podMonitor": {
        "enabled": True, "interval": "30s", "labels": {"release": "prometheus"},
        "pickerAuthorization": {"type": "Bearer", "credentials": {"name": "reader", "key": "token"}}}}
    monitored["spec"]["networkPolicy"] = {
        "prometheus": {"namespaceLabels": {"kubernetes.io/metadata.name": "monitoring"}},
        "egress": {"restrict": True, "apiServer": ["192.0.2.1/32"],
                   "to": [{"cidr": "198.51.100.0/24", "ports": [443]}]}}
    next(r for r in monitored["spec"]["roles"] if r["componentType"] == "decoder")["multinode"] = {"nodeCount": 2}
    next(r for r in monitored["spec"]["roles"] if r["componentType"] == "router")["endpointPicker"] = {
        "podSecurityContext": {"runAsNonRoot": True, "fsGroup": 2000},
        "securityContext": {"readOnlyRootFilesystem": True}, "resources": {"limits": {"memory": "2Gi"}},
        "networkPolicy": {"gateway": {"podLabels": {"gateway.networking.k8s.io/gateway-name": "gw"}},
                          "scrapers": {"namespaceLabels": {"kubernetes.io/metadata.name": "monitoring"}}},
        "replicas": 3, "failureMode": "FailOpen", "podAnnotations": {"sidecar.istio.io/inject": "false"}}
    out.append(monitored)
    # the router example as its authors' manifests write it: in TLS, the KV transfer in vLLM's other
    # spelling, the decode engine started from a script that execs it, a data-parallel leader's API servers,
    # each role a Service of its own and one over both
    authored = copy.deepcopy(routed)
    authored["spec"]["tls"] = {"secretName": "serving-tls", "verifyPeers": True}
    authored["spec"]["service"] = {"type": "LoadBalancer"}
    for role in authored["spec"]["roles"]:
        if role["componentType"] == "router":
            continue
        role["service"] = {"headless": role["componentType"] == "prefiller"}
        engine = role["template"]["spec"]["containers"][0]
        engine["args"] = [arg.replace("--kv-transfer-config", "--kv_transfer_config") for arg in engine["args"]]
        if role["componentType"] == "decoder":
            engine["command"] = ["/bin/bash", "-c", 'source "$BASH_ENV"; exec vllm serve "$@"', "--"]
            role["multinode"] = {"nodeCount": 2, "bootstrap": "vllm-data-parallel", "dataParallel": {
                "ranksPerNode": 1}, "leaderArgs": ["--api-server-count", "2"]}
    out.append(authored)
    # a role of each multi-node bootstrap, behind a router (one role serving from every node)
    out.append({"apiVersion": "fusioninfer.io/v1alpha1", "kind": "InferenceService",
                "metadata": {"name": "engines", "namespace": "llm"}, "spec": {"roles": [*every_bootstrap(), {
                    "name": "router", "componentType": "router", "httproute": {"parentRefs": [{"name": "gw"}]}}]}})
    container = {"name": "vllm", "image": "vllm/vllm-openai:v0.11.0", "resources": {"limits": {"nvidia.com/gpu": "8"}}}
    for size, leader in ((4, True), (1, False)):
        template: dict[str, Any] = {"size": size, "restartPolicy": "RecreateGroupOnPodRestart",
                                    "workerTemplate": {"spec": {"containers": [container]}}}
        if leader:
            template["leaderTemplate"] = {"metadata": {"labels": {"role": "leader"}},
                                          "spec": {"containers": [{**container, "ports": [{"containerPort": 8000}]}]}}
        out.append({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                    "metadata": {"name": f"lws-{size}", "annotations": {"fusioninfer.io/take-over": "true"}},
                    "spec": {"replicas": 2, "startupPolicy": "LeaderCreated", "leaderWorkerTemplate": template}})
    # a worker-only LeaderWorkerSet whose pods join by our Ray bootstrap
    ray = copy.deepcopy(out[-1])
    ray["metadata"] = {"name": "ray", "annotations": {"fusioninfer.io/take-over": "true",
                                                      "fusioninfer.io/ray-bootstrap": "true"}}
    ray["spec"]["leaderWorkerTemplate"] = {**ray["spec"]["leaderWorkerTemplate"], "size": 2, "workerTemplate": {
        "metadata": {"labels": {"app": "ray"}}, "spec": {"containers": [{
            **container, "args": ["--model", "m"], "ports": [{"containerPort": 8000, "name": "http"}],
            "env": [{"name": "X", "value": "1"}]}]}}}
    out.append(ray)
    # LWS's sample shape, kept whole in the role layout
    whole = copy.deepcopy(out[-3])
    whole["metadata"] = {"name": "sample", "annotations": {"fusioninfer.io/take-over": "true",
                                                           "fusioninfer.io/layout": "role"}}
    whole["spec"]["rolloutStrategy"] = {"type": "RollingUpdate",
                                        "rollingUpdateConfiguration": {"maxUnavailable": 2, "maxSurge": 2}}
    whole["spec"]["networkConfig"] = {"subdomainPolicy": "Shared"}
    out.append(whole)
    return out


def with_null_at(obj: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any]:
    """OBJ with null at PATH."""
    out = copy.deepcopy(obj)
    parent: Any = out
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = None
    return out


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into NODE, itself first: keys of mappings, indices of lists."""
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from paths(value, (*prefix, index))


def _mutate_data(rng: random.Random, obj: dict[str, Any]) -> str:
    path = rng.choice(list(paths(obj))[1:])
    parent: Any = obj
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    action = rng.choice(["set", "set", "set", "null", "delete", "duplicate", "add", "rename"])
    if action == "set":
        parent[last] = copy.deepcopy(rng.choice(INTERESTING))
    elif action == "null":  # what an unset Helm value leaves in a template
        parent[last] = None
    elif action == "delete":
        del parent[last]
    elif action == "duplicate" and isinstance(parent, list):
        parent.insert(last, copy.deepcopy(parent[last]))
    elif action == "add" and isinstance(parent, dict):
        parent[rng.choice(["unexpected", "replica", "namespace", "labels", "1", "y"])] = rng.choice(INTERESTING)
    elif action == "rename" and isinstance(parent, dict) and isinstance(parent.get("name"), str):
        parent["name"] = rng.choice(["a", "a-1", "a-1-0", "decode", "prefill", "x" * 60, "Bad_Name", "router"])
    return f"{action} {'.'.join(map(str, path))}"


def _mutate_text(rng: random.Random, text: str) -> tuple[str, str]:
    kind = rng.choice(["tag", "crlf", "cr", "bom", "directive", "end-marker", "anchor", "laughs", "flow",
                       "delete-char", "insert-char", "duplicate-line", "disguise"])
    lines = text.split("\n")
    if kind == "tag":
        candidates = [i for i, line in enumerate(lines) if ": " in line and not line.rstrip().endswith(":")]
        if candidates:
            i = rng.choice(candidates)
            key, _, value = lines[i].partition(": ")
            lines[i] = f"{key}: {rng.choice(TAGS)}{value}"
        return "\n".join(lines), kind
    if kind == "crlf":
        return text.replace("\n", "\r\n"), kind
    if kind == "cr":
        return text.replace("\n", "\r"), kind
    if kind == "bom":
        return "\ufeff" + text, kind
    if kind == "directive":
        return "%YAML 1.1\n%TAG !k! tag:yaml.org,2002:\n---\n" + text, kind
    if kind == "end-marker":
        return text + "...\n", kind
    if kind == "anchor":
        candidates = [i for i, line in enumerate(lines) if line.rstrip().endswith(":")]
        if len(candidates) >= 2:
            a, b = sorted(rng.sample(candidates, 2))
            indent_b = len(lines[b]) - len(lines[b].lstrip())
            lines[a] = lines[a] + " &anchor"
            lines[b] = " " * indent_b + lines[b].strip() + " *anchor"
            end = b + 1
            while end < len(lines) and (_indent(lines[end]) > indent_b or not lines[end].strip()):
                end += 1
            del lines[b + 1:end]
        return "\n".join(lines), kind
    if kind == "laughs":
        laughs = ["x0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        laughs += [f"x{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, rng.randint(2, 10))]
        return "\n".join(laughs) + "\n" + text, kind
    if kind == "flow":
        return yaml.safe_dump(yaml.safe_load(text), default_flow_style=True) if _loads(text) else text, kind
    if kind == "delete-char" and text:
        i = rng.randrange(len(text))
        return text[:i] + text[i + 1:], kind
    if kind == "insert-char":
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(["\t", ":", "-", "[", "{", "'", '"', "&", "*", "!", "#", "|", "\x01", "\u2028"]) \
            + text[i:], kind
    if kind == "disguise":  # the same kind, written so that its text does not show it
        for plain in ("InferenceService", "LeaderWorkerSet"):
            disguised = rng.choice([f'"{plain[0]}\\x{ord(plain[1]):02x}{plain[2:]}"',
                                    f'"{plain[:3]}\\u{ord(plain[3]):04x}{plain[4:]}"',
                                    f'"\\U{ord(plain[0]):08x}{plain[1:]}"',
                                    "!!binary " + base64.b64encode(plain.encode()).decode(),
                                    "!<tag:yaml.org,2002:binary> " + base64.b64encode(plain.encode()).decode(),
                                    f'"{plain[:5]}\\\n  {plain[5:]}"'])
            text = text.replace(f"kind: {plain}", f"kind: {disguised}")
        return text, kind
    if kind == "duplicate-line" and lines:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    return "\n".join(lines), kind


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _loads(text: str) -> bool:
    try:
        yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    return True


def case(seed: int, seed_objects: list[dict[str, Any]]) -> Case:
    rng = random.Random(seed)
    obj = copy.deepcopy(rng.choice(seed_objects))
    source = f"chart/templates/{obj['kind'].lower()}.yaml"
    mutations = [_mutate_data(rng, obj) for _ in range(rng.choice([0, 1, 1, 1, 2, 3]))]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))  # stacked nesting mutations outgrow PyYAML's recursive representer
    try:
        text = yaml.safe_dump(obj, sort_keys=False, allow_unicode=rng.random() < 0.5)
    finally:
        sys.setrecursionlimit(limit)
    if rng.random() < 0.35:
        text, kind = _mutate_text(rng, text)
        mutations.append(kind)
    documents = [f"---\n# Source: {source}\n{text}"]
    for _ in range(rng.choice([0, 0, 1, 2])):
        documents.insert(rng.randrange(len(documents) + 1), "---\n" + rng.choice(FOREIGN))
    if rng.random() < 0.05:
        documents.append(documents[0])  # the same object twice
        mutations.append("twice")
    return Case(seed, "".join(documents), take_over=rng.random() < 0.3, mutations=tuple(mutations))
