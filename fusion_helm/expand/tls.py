"""``spec.tls``: the serving pods serve HTTPS with the certificate of a Secret the user names.

Every serving pod (the pods the InferencePool and the Services select) mounts the Secret read-only at
``MOUNT_PATH``; its engine serves with it (vLLM's and SGLang's ``--ssl-certfile``, ``--ssl-keyfile``, and
``--enable-ssl-refresh``, which reloads a renewed certificate), and its engine's HTTP probes ask in HTTPS.
The prefill/decode sidecar, the picker and the PodMonitors read ``scheme`` and ``mount`` from here, as KServe
runs its P/D pods: the sidecar serves and dials in TLS with the same certificate.
"""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.base.kinds import CERTIFICATE
from fusion_helm.base.labels import LABEL_SERVICE
from fusion_helm.errors import InvalidSpec
from fusion_helm.expand.labelling import object_metadata
from fusion_helm.expand.names import certificate_name, role_service_name, service_service_name
from fusion_helm.model import InferenceService, Role
from fusion_helm.model.engine_flags import ENABLE_SSL_REFRESH, SSL_CERTFILE, SSL_KEYFILE
from fusion_helm.model.exposure import Tls

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fusion_helm.expand.pods import Change, Pod

VOLUME = "fusioninfer-tls"
MOUNT_PATH = "/var/run/fusioninfer/tls"
CERTIFICATE_FILE = f"{MOUNT_PATH}/tls.crt"
KEY_FILE = f"{MOUNT_PATH}/tls.key"
CA = "ca.crt"
"""The Secret's key a verifying peer trusts (cert-manager's, KServe's); else the certificate itself."""
HTTPS = "HTTPS"
OURS = (SSL_CERTFILE, SSL_KEYFILE, ENABLE_SSL_REFRESH)


def serving_https(service: InferenceService, role: Role) -> Change:
    """Each serving pod of ROLE serving HTTPS with spec.tls's certificate."""
    tls = service.tls
    assert tls is not None
    return lambda pod: _serving(service, role, tls, pod)


def certificate(service: InferenceService) -> dict[str, Any]:
    """spec.tls.certManager's Certificate: the Secret the serving pods mount, for the names they are
    reached by — localhost (the sidecar's own engine), 127.0.0.1, and the service's Services."""
    tls = service.tls
    assert tls is not None and tls.cert_manager is not None
    services = [role_service_name(service, role) for role in service.roles if role.service is not None]
    if service.service is not None:
        services.append(service_service_name(service))
    qualified = [f"{name}.{service.namespace}.svc" for name in services] if service.namespace else []
    spec: dict[str, Any] = {
        "secretName": tls.secret_name,
        "issuerRef": dict(tls.cert_manager["issuerRef"]),
        "dnsNames": ["localhost", *services, *qualified],
        "ipAddresses": ["127.0.0.1"],
        "usages": ["server auth", "digital signature", "key encipherment"],
        # A renewal makes a new key too: the engines and the sidecar read both again.
        "privateKey": {"rotationPolicy": "Always"},
    }
    for field in ("duration", "renewBefore"):
        if field in tls.cert_manager:
            spec[field] = tls.cert_manager[field]
    return {"apiVersion": CERTIFICATE.api_version, "kind": CERTIFICATE.kind,
            "metadata": object_metadata(service, certificate_name(service.name), {LABEL_SERVICE: service.name}),
            "spec": spec}


def volume(tls: Tls) -> dict[str, Any]:
    return {"name": VOLUME, "secret": {"secretName": tls.secret_name}}


def mount() -> dict[str, Any]:
    return {"name": VOLUME, "mountPath": MOUNT_PATH, "readOnly": True}


def with_volume(spec: Mapping[str, Any], tls: Tls) -> list[Any]:
    """SPEC's volumes with the Secret's, once (a malformed one kept, for the schema check to refuse)."""
    return [*(given for given in spec.get("volumes") or []
              if not (isinstance(given, Mapping) and given.get("name") == VOLUME)), volume(tls)]


def with_mount(container: Mapping[str, Any]) -> list[Any]:
    """CONTAINER's volume mounts with the Secret's."""
    return [*(container.get("volumeMounts") or []), mount()]


def check_lists(service: InferenceService, path: str, spec: Mapping[str, Any]) -> None:
    """What TLS adds to is a list: the pod's volumes, the serving container's volume mounts."""
    for field, value in (("volumes", spec.get("volumes")),
                         ("containers[0].volumeMounts", spec["containers"][0].get("volumeMounts"))):
        if value is not None and not isinstance(value, list):
            raise InvalidSpec(service.where, f"{path}.{field}",
                              "must be a list, to which spec.tls adds its certificate's volume")


def https_probe(probe: Mapping[str, Any]) -> dict[str, Any]:
    """An HTTP probe asking in HTTPS (the kubelet does not verify the certificate)."""
    handler = probe.get("httpGet")
    return {**probe, "httpGet": {**handler, "scheme": HTTPS}} if isinstance(handler, dict) else dict(probe)


def _serving(service: InferenceService, role: Role, tls: Tls, pod: Pod) -> Pod:
    server = pod.server
    assert server is not None, "a serving pod runs a server"
    path = f"{role.template_path}.spec"
    if server.engine is None:
        raise InvalidSpec(service.where, f"{path}.containers[0].command",
                          "runs neither vllm nor sglang, so spec.tls cannot have it serve HTTPS; run one of them, or "
                          "leave spec.tls out")
    spec = pod.spec
    check_lists(service, path, spec)
    volumes = spec.get("volumes") or []
    if any(isinstance(given, Mapping) and given.get("name") == VOLUME for given in volumes):
        raise InvalidSpec(service.where, f"{path}.volumes",
                          f"has a volume named {VOLUME}, the name of spec.tls's certificate volume; rename it")
    for option in OURS:
        for occurrence in server.occurrences(option):
            raise InvalidSpec(service.where, server.field(occurrence),
                              f"{occurrence.written} is spec.tls's: the engine serves with its certificate; remove it")
    served = server.appended([f"{SSL_CERTFILE.name(server.engine)}={CERTIFICATE_FILE}",
                              f"{SSL_KEYFILE.name(server.engine)}={KEY_FILE}", ENABLE_SSL_REFRESH.name(server.engine)],
                             "spec.tls gives it its certificate")
    engine = pod.serving_container
    container = pod.running(served)
    container["volumeMounts"] = with_mount(engine)
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        if isinstance(engine.get(probe), dict):
            container[probe] = https_probe(engine[probe])
    return pod.with_spec({**spec, "containers": [container, *spec["containers"][1:]],
                          "volumes": with_volume(spec, tls)}, served)
