"""Precise prefix-cache routing: the picker reads what each engine holds from the engines' own KV-cache
events, where the approximate scorer guesses it from where it sent earlier requests.

Each serving vLLM engine publishes its KV-cache events (blocks stored, removed, all cleared) on a ZMQ socket
it binds (``--kv-events-config``: ``EVENTS_PORT``, and a replay socket, ``REPLAY_PORT``, that answers what a
subscriber missed). Each picker replica subscribes to every serving pod it routes to, as it discovers them
(llm-d-router's ``precise-prefix-cache-producer`` fed by its ``endpoint-notification-source``), so every
replica sees every event: one started later or restarted asks each engine's replay socket for the rest.
The producer hashes a request's prompt into the same blocks, for which it needs the prompt's tokens: its
``token-producer`` asks a render server in the picker's own pod (``vllm launch render``, the serving image,
GPU-less), which reads the tokenizer where the engines read it. The prefix-cache scorer then scores each pod
by the blocks it really holds.

The router asks for it by its strategy (``precise-prefix-cache``); a service whose engines cannot publish
so (SGLang's, whose KV events llm-d-router reads but which has no render server to tokenize as it does; an
engine whose command line is not read) is refused by that field, and keeps the approximate scorer. The
default scoring stays the approximate one until the serving benchmark shows which is ahead.
"""

from __future__ import annotations

import json

from fusion_helm.errors import InvalidSpec, show
from fusion_helm.expand.cache import RESTRICTED_CONTAINER, WEIGHTS_VOLUME
from fusion_helm.expand.proxies import image_repository, image_version
from fusion_helm.expand.router.model_names import model_names
from fusion_helm.expand.router.ports import EVENTS_PORT, EVENTS_PORT_NAME, REPLAY_PORT, REPLAY_PORT_NAME
from fusion_helm.expand.weights import HUB_TOKEN_VOLUME
from fusion_helm.limits import count
from fusion_helm.model import InferenceService, Role, Router, Scorer
from fusion_helm.model.engine_flags import BLOCK_SIZE, KV_EVENTS_CONFIG, Engine

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fusion_helm.expand.generations import PreciseIndex
    from fusion_helm.expand.pods import Change, Pod, RoleTemplates

TOPIC_PREFIX = "kv@"
"""The events' topic is ``kv@<pod>@<model>``: the picker subscribes to this prefix, and keys each block by
the model name in the topic, the name its requests target."""
BLOCK_TOKENS = 16
"""The engines' KV block, in tokens, where their command lines give none: vLLM's default. The picker hashes
prompts in the engines' own blocks: with smaller blocks of its own, an engine's block maps onto several, and
evicting it drops the pod from every one of them, though another block it still holds shares the first (the
index of llm-d-router v0.10.0, llm-d-kv-cache v0.9.0) — and the picker would count a shared part of a block
as cached, where vLLM caches whole blocks only."""
RENDER_PORT = 8200
RENDER_SINCE = (0, 19, 0)
"""The vLLM release that has the render server (``vllm launch render``)."""
RENDER_CONTAINER = "render"
RENDER_RESOURCES = {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}
"""A tokenizer and a chat template in one process: what a render server of a large model's tokenizer takes."""
RENDER_SCRATCH = "/render-home"
MODEL_VOLUMES = (WEIGHTS_VOLUME, HUB_TOKEN_VOLUME)
"""The engine's volumes the render server mounts too: the model cache, and the hub's token where the engine
downloads its model (the render server then downloads its tokenizer)."""
PRODUCER = "precise-prefix-cache-producer"
TOKEN_PRODUCER = "token-producer"
NOTIFICATIONS = "endpoint-notification-source"


def published_model(service: InferenceService, router: Router, templates: Mapping[str, RoleTemplates]) -> str:
    """The model name the serving engines' requests target and their events' topics carry, where every one
    publishes its KV-cache events as the picker reads them (a vLLM whose command line names its model);
    refused by field if one does not."""
    first: str | None = None
    for role in service.roles:
        server = templates[role.name].leading.server
        if server is None or server.engine is not Engine.VLLM:
            runs = "runs SGLang" if server is not None and server.engine is Engine.SGLANG else \
                "runs no engine its command line shows"
            raise InvalidSpec(service.where, f"{router.path}.strategy",
                              f"{Scorer.PRECISE_PREFIX_CACHE} reads the engines' KV-cache events, and role {role.name} "
                              f"{runs} (the picker reads vLLM's); choose {Scorer.PREFIX_CACHE}")
        image = str(templates[role.name].leading.serving_container.get("image") or "")
        release = image_version(image)
        if "vllm" in image_repository(image) and release is not None and release < RENDER_SINCE:
            raise InvalidSpec(service.where, f"{role.template_path}.spec.containers[0].image",
                              f"{image} has no render server (vllm launch render, since vLLM "
                              f"v{'.'.join(map(str, RENDER_SINCE))}), which each picker tokenizes with for "
                              f"{Scorer.PRECISE_PREFIX_CACHE}; serve a later vLLM, or choose {Scorer.PREFIX_CACHE}")
        named = model_names(server)
        if not named:
            raise InvalidSpec(service.where, f"{router.path}.strategy",
                              f"{Scorer.PRECISE_PREFIX_CACHE} keys each engine's blocks by the model its requests "
                              f"name, and the engine of role {role.name} names none its command line shows (its "
                              f"--served-model-name or model); name it, or choose {Scorer.PREFIX_CACHE}")
        first = first or named[0]
    assert first is not None, "a service has a serving role"
    return first


def published_block_tokens(service: InferenceService, router: Router, templates: Mapping[str, RoleTemplates]) -> int:
    """The KV block, in tokens, of every serving engine (their ``--block-size``, else vLLM's default), which the
    picker hashes prompts in; refused by field where one is not a count, or where two roles' differ."""
    first: tuple[int, str] | None = None
    for role in service.roles:
        server = templates[role.name].leading.server
        assert server is not None, "published_model has refused a role without an engine"
        value, occurrence = server.value(BLOCK_SIZE)
        tokens = BLOCK_TOKENS if occurrence is None else count(value or "")
        where = f"{router.path}.strategy" if occurrence is None else server.field(occurrence)
        if not tokens:
            raise InvalidSpec(service.where, where, f"must give a block size in tokens (a positive count) for "
                              f"{Scorer.PRECISE_PREFIX_CACHE}, which hashes prompts in the engines' blocks; "
                              f"got {show(value)}")
        if first is not None and first[0] != tokens:
            raise InvalidSpec(service.where, where,
                              f"{Scorer.PRECISE_PREFIX_CACHE} hashes every prompt in one block size, and the engines "
                              f"of role {first[1]} keep blocks of {first[0]} tokens, those of role {role.name} of "
                              f"{tokens} ({BLOCK_SIZE.name(Engine.VLLM)}, else vLLM's {BLOCK_TOKENS}): give them one, "
                              f"or choose {Scorer.PREFIX_CACHE}")
        first = first or (tokens, role.name)
    assert first is not None, "a service has a serving role"
    return first[0]


def publishing(service: InferenceService, role: Role) -> Change:
    """ROLE's serving pods publish their KV-cache events where the pickers subscribe."""
    def change(pod: Pod) -> Pod:
        server = pod.server
        if server is None or server.engine is not Engine.VLLM or not model_names(server):
            raise InvalidSpec(service.where, f"{role.template_path}.spec.containers[0]",
                              f"runs no vLLM naming its model that its command line shows, and every serving pod "
                              f"publishes its KV-cache events for {Scorer.PRECISE_PREFIX_CACHE}; choose "
                              f"{Scorer.PREFIX_CACHE}")
        for occurrence in server.occurrences(KV_EVENTS_CONFIG):
            raise InvalidSpec(service.where, server.field(occurrence),
                              f"{occurrence.written} is the router's where its picker routes by the engines' KV-cache "
                              f"events ({Scorer.PRECISE_PREFIX_CACHE}): remove it")
        config = {"enable_kv_cache_events": True, "publisher": "zmq", "endpoint": f"tcp://*:{EVENTS_PORT}",
                  "replay_endpoint": f"tcp://*:{REPLAY_PORT}",
                  "topic": f"{TOPIC_PREFIX}{role.name}@{model_names(server)[0]}"}
        served = server.appended([f"{KV_EVENTS_CONFIG.name(Engine.VLLM)}={json.dumps(config, separators=(',', ':'))}"],
                                 "the pickers subscribe to its KV-cache events")
        container = pod.running(served)
        ports = list(container.get("ports") or [])
        for name, number in ((EVENTS_PORT_NAME, EVENTS_PORT), (REPLAY_PORT_NAME, REPLAY_PORT)):
            for index, port in enumerate(ports):
                if isinstance(port, dict) and (port.get("name") == name or port.get("containerPort") == number):
                    raise InvalidSpec(service.where, f"{role.template_path}.spec.containers[0].ports[{index}]",
                                      f"port {number} ({name}) is where the engine publishes its KV-cache events to "
                                      f"the pickers ({Scorer.PRECISE_PREFIX_CACHE}); use another")
            ports.append({"name": name, "containerPort": number, "protocol": "TCP"})
        container["ports"] = ports
        return pod.with_spec({**pod.spec, "containers": [container, *pod.spec["containers"][1:]]}, served)

    return change


def producer_plugins(index: PreciseIndex) -> list[dict[str, Any]]:
    """The picker's plugins that feed the prefix-cache scorer what the engines hold, hashing prompts as
    INDEX says."""
    return [
        {"type": TOKEN_PRODUCER, "parameters": {"modelName": index.model,
                                                "vllm": {"url": f"http://127.0.0.1:{RENDER_PORT}"}}},
        {"type": NOTIFICATIONS},
        {"type": PRODUCER, "parameters": {
            # A request's blocks count as its pod's from the moment it is sent there, until the engine's own
            # events say (or a short while passes): requests sharing a new prefix follow the first one
            # rather than spread while its events are under way.
            "speculativeIndexing": True,
            "tokenProcessorConfig": {"blockSizeTokens": index.block_tokens},
            "kvEventsConfig": {"topicFilter": TOPIC_PREFIX, "discoverPods": True,
                               "podDiscoveryConfig": {"socketPort": EVENTS_PORT, "replaySocketPort": REPLAY_PORT}}}},
    ]


SCORER_PARAMETERS = {"prefixMatchInfoProducerName": PRODUCER}
DATA_LAYER = {"sources": [{"pluginRef": NOTIFICATIONS, "extractors": [{"pluginRef": PRODUCER}]}]}
"""The pods the picker discovers feed its producer, which subscribes to each one's events."""


def render_container(pod: Pod, served: str) -> dict[str, Any]:
    """The render server beside the picker: the serving image, reading the model where POD's engine does
    (the model cache's volume, read-only, where it reads the cache), answering for SERVED, the name the
    picker's requests to it carry."""
    server = pod.server
    assert server is not None
    engine = pod.serving_container
    model, _ = server.model()
    mounts = [{"name": "render-home", "mountPath": RENDER_SCRATCH}, {"name": "tmp", "mountPath": "/tmp"},
              *({**mount, "readOnly": True} for mount in engine.get("volumeMounts") or []
                if mount.get("name") in MODEL_VOLUMES)]
    env = [{"name": "HOME", "value": RENDER_SCRATCH},
           *(entry for entry in engine.get("env") or [] if entry.get("name", "").startswith(("HF_", "TRANSFORMERS_")))]
    probe = {"httpGet": {"path": "/health", "port": RENDER_PORT}, "periodSeconds": 2}
    return {
        "name": RENDER_CONTAINER,
        "image": engine["image"],
        "command": ["vllm", "launch", "render", str(model), "--served-model-name", served, "--host", "127.0.0.1",
                    "--port", str(RENDER_PORT)],
        "env": env,
        "ports": [{"name": "render", "containerPort": RENDER_PORT}],
        "restartPolicy": "Always",
        "startupProbe": {**probe, "failureThreshold": 300},
        "readinessProbe": probe,
        "resources": RENDER_RESOURCES,
        "securityContext": dict(RESTRICTED_CONTAINER),
        "volumeMounts": mounts,
    }


def render_volumes(pod: Pod) -> list[dict[str, Any]]:
    volumes = [volume for volume in pod.spec.get("volumes") or [] if volume.get("name") in MODEL_VOLUMES]
    return [{"name": "render-home", "emptyDir": {"sizeLimit": "1Gi"}}, *volumes]
