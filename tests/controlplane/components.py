"""Start each component of the test control plane on loopback, in the order they depend on each other."""

from __future__ import annotations

import base64
import re
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from tests.controlplane.builds import ROOT, binary, shared, shared_crd, shared_crds, shared_dir
from tests.controlplane.processes import TOKEN, ControlPlane, free_port, write_kubeconfig

KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
POD_CIDR, NODE_IP = "127.244.0.1/16", "127.0.1.1"
"""Where kwok takes pods' and nodes' addresses: inside 127.0.0.0/8, every address of which is this
machine's own on Linux, so that whatever dials a pod (a picker scraping its endpoints, a sidecar, a probe)
stays on the machine. (Loopback addresses are refused in Endpoints and EndpointSlices: nothing here
relies on them, the pickers watch pods.)"""
KWOK_LOGS_CRD = "kwok.x-k8s.io_logs.yaml"
"""kwok's Logs: which file holds a pod's container logs, as its kubelet API serves them."""
SERVICE_CIDR = "10.96.0.0/16"
FRONT_PROXY_CLIENT = "front-proxy-client"
KEDA_NAMESPACE = "keda"
KEDA_METRICS_SERVER = "keda-metrics-apiserver"
EXTERNAL_METRICS = "v1beta1.external.metrics.k8s.io"
"""Service cluster IPs are allocated from here and never routed: nothing may dial one."""


def openssl(*args: str | Path) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)


POD_GATEWAY = "127.0.1.254"
"""The suite's side of every serving pod's veth pair (tests/controlplane/serving.py): the pods' route out, and
where they reach the API server, whose certificate names it for them."""


def self_signed_cert(directory: Path, name: str) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that is its own CA: for webhooks served on loopback."""
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", f"/CN={name}",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", cert)
    return cert, key


def ca_signed_cert(directory: Path, name: str, dns: tuple[str, ...] = ("localhost",),
                   usage: str = "serverAuth", ips: tuple[str, ...] = ()) -> tuple[Path, Path, Path]:
    """A certificate authority and a certificate for 127.0.0.1 (and IPS) and DNS it signs, as a cluster's:
    clients that refuse a certificate that is its own CA (rustls, as Rust clients such as SGLang's router use
    it) take it. USAGE: serverAuth, clientAuth or both. Its CA, certificate and key."""
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key = directory / f"{name}-ca.crt", directory / f"{name}-ca.key"
    cert, key, request = directory / f"{name}.crt", directory / f"{name}.key", directory / f"{name}.csr"
    extensions = directory / f"{name}.ext"
    names = ",".join(["IP:127.0.0.1", *(f"IP:{ip}" for ip in ips), *(f"DNS:{name}" for name in dns)])
    extensions.write_text(f"subjectAltName={names}\nbasicConstraints=CA:FALSE\n"
                          f"keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage={usage}\n")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", f"/CN={name}-ca",
            "-keyout", ca_key, "-out", ca)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", key, "-out", request)
    openssl("x509", "-req", "-in", request, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-days", "30",
            "-extfile", extensions, "-out", cert)
    return ca, cert, key


def http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return bool(response.status == 200)


def etcd(cp: ControlPlane) -> None:
    client, peer = free_port(), free_port()
    cp.ports["etcd"] = client
    cp.spawn("etcd", [
        binary("etcd"), "--name", "fusioninfer-test", "--data-dir", cp.workdir / "etcd",
        "--listen-client-urls", f"http://127.0.0.1:{client}", "--advertise-client-urls", f"http://127.0.0.1:{client}",
        "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
        "--initial-cluster", f"fusioninfer-test=http://127.0.0.1:{peer}",
        "--listen-metrics-urls", f"http://127.0.0.1:{free_port()}",
        "--unsafe-no-fsync",  # a throw-away store: durability only costs time
    ])
    cp.wait("etcd", lambda: http_ok(f"http://127.0.0.1:{client}/health"), "etcd")


def apiserver(cp: ControlPlane) -> None:
    """kube-apiserver: one token-authenticated admin, RBAC, a serving certificate from a CA made here."""
    pki = cp.workdir / "pki"
    pki.mkdir(exist_ok=True)
    openssl("genrsa", "-out", pki / "sa.key", "2048")
    openssl("rsa", "-in", pki / "sa.key", "-pubout", "-out", pki / "sa.pub")
    (pki / "tokens.csv").write_text(f'{TOKEN},admin,admin,"system:masters"\n')
    ca, cert, key = ca_signed_cert(pki, "apiserver", ips=(POD_GATEWAY,))
    front_proxy_ca, front_proxy_cert, front_proxy_key = ca_signed_cert(pki, FRONT_PROXY_CLIENT, usage="clientAuth")
    cp.ports["apiserver"] = free_port()
    cp.server = f"https://127.0.0.1:{cp.ports['apiserver']}"
    cp.ca = ca
    write_kubeconfig(cp.kubeconfig, cp.server, ca)
    cp.spawn("kube-apiserver", [
        binary("kube-apiserver"), "--etcd-servers", f"http://127.0.0.1:{cp.ports['etcd']}",
        "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
        "--secure-port", str(cp.ports["apiserver"]), "--tls-cert-file", cert, "--tls-private-key-file", key,
        "--token-auth-file", pki / "tokens.csv", "--authorization-mode", "RBAC",
        "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
        "--service-account-key-file", pki / "sa.pub", "--service-account-signing-key-file", pki / "sa.key",
        "--service-cluster-ip-range", SERVICE_CIDR, "--allow-privileged=true",
        # Its own address, 127.0.0.1, is refused in the kubernetes Service's Endpoints: nothing to reconcile.
        "--endpoint-reconciler-type", "none",
        # The aggregation layer: requests it proxies to an extension API server (KEDA's metrics server)
        # carry the user in headers, vouched for by this client certificate.
        "--requestheader-client-ca-file", front_proxy_ca, "--requestheader-allowed-names", FRONT_PROXY_CLIENT,
        "--requestheader-username-headers", "X-Remote-User", "--requestheader-group-headers", "X-Remote-Group",
        "--requestheader-extra-headers-prefix", "X-Remote-Extra-",
        "--proxy-client-cert-file", front_proxy_cert, "--proxy-client-key-file", front_proxy_key,
    ])
    cp.wait("kube-apiserver /readyz", lambda: cp.get("/readyz")[0] == 200, "kube-apiserver")


def controllers(cp: ControlPlane) -> None:
    """kube-controller-manager and kube-scheduler. Started after the CRDs are in: the garbage collector
    learns of new kinds only on its next discovery resync (30 s), so cascading deletes of LWS objects
    would stall until then."""
    pki = cp.workdir / "pki"
    common = ["--kubeconfig", cp.kubeconfig, "--leader-elect=false", "--bind-address", "127.0.0.1",
              "--secure-port", "0"]
    cp.spawn("kube-controller-manager", [
        binary("kube-controller-manager"), *common, "--service-account-private-key-file", pki / "sa.key",
        "--root-ca-file", pki / "apiserver-ca.crt", "--use-service-account-credentials=false",
        # No cloud and no CNI: node IPAM and the cloud controllers have nothing to do. Pods' loopback
        # addresses are refused in Endpoints and EndpointSlices: their controllers would retry for ever.
        "--controllers", "*,-nodeipam,-service-lb-controller,-cloud-node-lifecycle,-endpoints-controller,"
                         "-endpointslice-controller,-endpointslice-mirroring-controller",
        # The autoscalers reconcile every 3 s (15 s by default): a test waits less for each step.
        "--horizontal-pod-autoscaler-sync-period", "3s",
    ])
    cp.spawn("kube-scheduler", [binary("kube-scheduler"), *common])
    cp.wait("the default namespace and service account",
            lambda: cp.get("/api/v1/namespaces/default/serviceaccounts/default")[0] == 200,
            "kube-controller-manager")


def crds(cp: ControlPlane) -> None:
    """The upstream CRDs of every kind the control plane serves (ours come with `helm install`)."""
    upstream = [shared_crd("scheduling.volcano.sh_podgroups.yaml"), shared("kwok", KWOK_LOGS_CRD),
                *sorted(shared_crds().glob("leaderworkerset.x-k8s.io_*.yaml")),
                *sorted(shared_crds().glob("disaggregatedset.x-k8s.io_*.yaml"))]
    upstream += sorted(p for p in shared_dir("volcano").glob("*.yaml") if p.name != upstream[0].name)
    # What a router creates and its pickers read: Gateway API, Inference Extension and llm-d.ai objects.
    upstream += sorted([*shared_crds().glob("gateway.networking.k8s.io_*.yaml"),
                        *shared_crds().glob("inference.networking.*.yaml"),
                        *shared_dir("llmd-router").glob("llm-d.ai_*.yaml")])
    for path in upstream:
        cp.apply(path.read_text())
    cp.established()


def kwok(cp: ControlPlane) -> None:
    """kwok manages the nodes annotated kwok.x-k8s.io/node=fake: they turn Ready and renew their
    leases, so the node lifecycle controller lifts their not-ready taint; their pods turn Ready, but
    for those annotated kwok.x-k8s.io/status: custom (tests.controlplane.hook_kubelet runs them). It serves the
    nodes' kubelet API at their address: a pod's logs (`kubectl logs`, Helm's hook output) are the file
    a kwok Logs object names (tests.controlplane.hook_kubelet writes both)."""
    stages = [shared("kwok", name).read_text() for name in (
        "node-initialize.yaml", "node-heartbeat-with-lease.yaml", "pod-ready.yaml", "pod-complete.yaml",
        "pod-delete.yaml")]
    config = cp.workdir / "kwok.yaml"
    config.write_text("\n---\n".join(stages))
    cert, key = self_signed_cert(cp.workdir / "pki", "kubelet")  # the API server does not verify a kubelet's
    kubelet_port = free_port()
    cp.spawn("kwok", [
        binary("kwok"), "--kubeconfig", cp.kubeconfig, "--config", config, "--manage-all-nodes=false",
        "--manage-nodes-with-annotation-selector", f"{KWOK_NODE_ANNOTATION}=fake", "--enable-crds", "Logs",
        "--server-address", f"{NODE_IP}:{kubelet_port}", "--node-port", str(kubelet_port),
        "--tls-cert-file", cert, "--tls-private-key-file", key, "--cidr", POD_CIDR, "--node-ip", NODE_IP,
        "--node-lease-duration-seconds", "40",
        # Pods so annotated are tests.controlplane.hook_kubelet's to run (hook Jobs whose code really runs).
        "--disregard-status-with-annotation-selector", "kwok.x-k8s.io/status=custom",
    ])


def _webhook_configurations(port: int, ca_bundle: str) -> list[dict[str, Any]]:
    """LWS's webhook configurations with their kustomize patches applied, pointed at loopback.

    Upstream they call the in-cluster Service `webhook-service`; there is no Service network here, so
    each clientConfig becomes `url: https://127.0.0.1:PORT/<path>` with our own CA bundle.
    """
    configurations = list(yaml.safe_load_all(shared("lws", "manifests.yaml").read_text()))
    patches = {"MutatingWebhookConfiguration": "mutating-patch.yaml",
               "ValidatingWebhookConfiguration": "validating-patch.yaml"}
    for configuration in configurations:
        for operation in yaml.safe_load(shared("lws", patches[configuration["kind"]]).read_text()):
            assert operation["op"] == "replace", operation
            index = int(operation["path"].removeprefix("/webhooks/"))
            configuration["webhooks"][index] = operation["value"]
        configuration["metadata"]["name"] = "lws-" + configuration["metadata"]["name"]
        for webhook in configuration["webhooks"]:
            path = webhook["clientConfig"]["service"]["path"]
            webhook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": ca_bundle}
    return configurations


def leaderworkerset(cp: ControlPlane) -> None:
    """The LWS controller with its webhooks, serving on loopback with a certificate made here.

    Its internal certificate management is off: it writes a Secret for a Service that does not exist.
    """
    certs = cp.workdir / "lws-certs"
    cert, key = self_signed_cert(certs, "lws-webhook")
    cert.rename(certs / "tls.crt")
    key.rename(certs / "tls.key")
    webhook, health = free_port(), free_port()
    config = cp.workdir / "lws-config.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "config.lws.x-k8s.io/v1alpha1", "kind": "Configuration",
        "leaderElection": {"leaderElect": False}, "internalCertManagement": {"enable": False},
        "webhook": {"host": "127.0.0.1", "port": webhook, "certDir": str(certs)},
        "metrics": {"bindAddress": "0"}, "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
    }))
    cp.spawn("lws-controller", [binary("lws-controller"), "--config", config, "--kubeconfig", cp.kubeconfig])
    cp.wait("the LWS controller /readyz", lambda: http_ok(f"http://127.0.0.1:{health}/readyz"), "lws-controller")
    ca_bundle = base64.b64encode((certs / "tls.crt").read_bytes()).decode()
    cp.apply(_webhook_configurations(webhook, ca_bundle))


SCHEDULER_CONF = Path(__file__).with_name("volcano-scheduler.conf")
HYPER_NODES = ROOT / "docs" / "hypernodes-racks-of-four.yaml"
"""The network topology the control plane's Volcano schedules by: ten nodes in racks of four, one spine."""


def volcano(cp: ControlPlane) -> None:
    """Volcano's scheduler (the upstream chart's scheduler configuration, network-topology-aware added)
    and its PodGroup and Queue controllers, with HyperNodes over the GPU nodes. The admission webhook
    manager is left out: the tests refuse by our prerequisite check what its PodGroup and Queue webhooks
    refuse (a queue missing or not Open), and Volcano Jobs are not used."""
    cp.apply(HYPER_NODES.read_text())
    common = ["--kubeconfig", cp.kubeconfig, "--leader-elect=false",
              "--listen-address", f"127.0.0.1:{free_port()}"]
    cp.spawn("vc-scheduler", [
        binary("vc-scheduler"), *common, "--scheduler-conf", SCHEDULER_CONF,
        "--healthz-address", f"127.0.0.1:{free_port()}", "--schedule-period", "500ms",
    ])
    cp.spawn("vc-controller-manager", [
        binary("vc-controller-manager"), *common, "--controllers", "pg-controller,queue-controller",
        "--healthz-address", f"127.0.0.1:{free_port()}",
    ])
    cp.wait("Volcano's default queue", lambda: cp.get(
        "/apis/scheduling.volcano.sh/v1beta1/queues/default")[0] == 200, "vc-scheduler")


def keda(cp: ControlPlane) -> None:
    """KEDA's operator and metrics API server, the latter registered as the external metrics API. An
    APIService names a Service, and Endpoints refuse loopback addresses: the aggregator dials an
    ExternalName Service's name and port as they are, so the Service is ExternalName 127.0.0.1."""
    pki = cp.workdir / "pki"
    # One certificate, as KEDA's own rotation makes it: the operator's gRPC server and its client, the
    # adapter, and the metrics server the aggregator verifies by its Service's name.
    ca, cert, key = ca_signed_cert(pki, "keda", usage="serverAuth,clientAuth", dns=(
        f"keda-operator.{KEDA_NAMESPACE}.svc", f"{KEDA_METRICS_SERVER}.{KEDA_NAMESPACE}.svc"))
    certs = cp.workdir / "keda-certs"  # the names KEDA reads from its certificate directory
    certs.mkdir(exist_ok=True)
    for source, name in ((ca, "ca.crt"), (cert, "tls.crt"), (key, "tls.key")):
        (certs / name).write_bytes(source.read_bytes())
    crds = [shared_crd(f"keda.sh_{kind}.yaml") for kind in
            ("scaledobjects", "triggerauthentications", "clustertriggerauthentications")]
    crds += sorted(shared_dir("keda").glob("*.yaml"))
    cp.kubectl("apply", "--server-side", *(arg for crd in crds for arg in ("-f", str(crd))))
    cp.established(*(yaml.safe_load(crd.read_text())["metadata"]["name"] for crd in crds))
    cp.apply(f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {KEDA_NAMESPACE}}}\n")
    grpc, adapter = free_port(), free_port()
    cp.ports["keda-operator"], cp.ports["keda-adapter"] = grpc, adapter
    env = {"WATCH_NAMESPACE": "", "POD_NAMESPACE": KEDA_NAMESPACE, "KEDA_CLUSTER_OBJECT_NAMESPACE": KEDA_NAMESPACE}
    cp.spawn("keda-operator", [
        binary("keda-operator"), "--kubeconfig", cp.kubeconfig, "--cert-dir", certs,
        "--metrics-bind-address", f"127.0.0.1:{free_port()}", "--health-probe-bind-address", f"127.0.0.1:{free_port()}",
        "--metrics-service-bind-address", f"127.0.0.1:{grpc}", "--enable-webhook-patching=false",
        "--enable-apiservice-patching=false"], env=env)
    cp.spawn("keda-adapter", [
        binary("keda-adapter"), *(arg for flag in ("--kubeconfig", "--lister-kubeconfig", "--authentication-kubeconfig",
                                                   "--authorization-kubeconfig") for arg in (flag, cp.kubeconfig)),
        "--cert-dir", certs, "--tls-cert-file", certs / "tls.crt", "--tls-private-key-file", certs / "tls.key",
        "--bind-address", "127.0.0.1", "--secure-port", str(adapter),
        "--metrics-service-address", f"127.0.0.1:{grpc}",
        "--metrics-service-grpc-authority", f"keda-operator.{KEDA_NAMESPACE}.svc"], env=env)
    cp.apply([
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": KEDA_METRICS_SERVER, "namespace": KEDA_NAMESPACE},
         "spec": {"type": "ExternalName", "externalName": "127.0.0.1", "ports": [{"name": "https", "port": adapter}]}},
        {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": EXTERNAL_METRICS},
         "spec": {"service": {"name": KEDA_METRICS_SERVER, "namespace": KEDA_NAMESPACE, "port": adapter},
                  "group": "external.metrics.k8s.io", "version": "v1beta1",
                  "caBundle": base64.b64encode(ca.read_bytes()).decode(),
                  "groupPriorityMinimum": 100, "versionPriority": 100}}])
    cp.wait("the external metrics API (KEDA's metrics server)",
            lambda: cp.get("/apis/external.metrics.k8s.io/v1beta1")[0] == 200, "keda-adapter")


def prometheus(cp: ControlPlane, name: str, scrape_configs: list[dict[str, Any]], port: int | None = None) -> str:
    """A Prometheus of its own NAME on loopback (at PORT, or one free) scraping as SCRAPE_CONFIGS say; its
    address."""
    port, workdir = port or free_port(), cp.workdir / f"prometheus-{name}"
    workdir.mkdir()
    config = workdir / "prometheus.yml"
    config.write_text(yaml.safe_dump({"global": {"scrape_interval": "2s", "evaluation_interval": "2s"},
                                      "scrape_configs": scrape_configs}))
    cp.spawn(f"prometheus-{name}", [
        binary("prometheus"), "--config.file", config, "--storage.tsdb.path", workdir / "data",
        "--web.listen-address", f"127.0.0.1:{port}"])
    address = f"http://127.0.0.1:{port}"
    cp.wait(f"Prometheus {name}", lambda: http_ok(f"{address}/-/ready"), f"prometheus-{name}")
    return address


def pod_monitor_scrapes(cp: ControlPlane, pod_monitors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scrape configuration the Prometheus Operator makes of POD_MONITORS (its podMonitor job per
    endpoint): the pods of the monitor's namespace its selector matches, on the endpoint's port and path,
    with the namespace, the pod and its podTargetLabels as labels — what the autoscalers' queries select by.
    Kubernetes discovery reads the API server with the admin's token."""
    def meta(label: str) -> str:
        return f"__meta_kubernetes_pod_label_{re.sub('[^a-zA-Z0-9_]', '_', label)}"

    scrapes = []
    for monitor in pod_monitors:
        namespace, spec = monitor["metadata"]["namespace"], monitor["spec"]
        for index, endpoint in enumerate(spec["podMetricsEndpoints"]):
            relabel = [{"action": "keep", "source_labels": [meta(key)], "regex": re.escape(value)}
                       for key, value in spec["selector"]["matchLabels"].items()]
            if "port" in endpoint:
                relabel.append({"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"],
                                "regex": re.escape(endpoint["port"])})
            else:
                relabel.append({"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_number"],
                                "regex": str(endpoint["portNumber"])})
            relabel += [{"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
                        {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"}]
            relabel += [{"source_labels": [meta(label)], "target_label": re.sub("[^a-zA-Z0-9_]", "_", label)}
                        for label in spec.get("podTargetLabels", [])]
            scrapes.append({
                "job_name": f"podMonitor/{namespace}/{monitor['metadata']['name']}/{index}",
                "metrics_path": endpoint.get("path", "/metrics"),
                "scheme": endpoint.get("scheme", "http"),
                "kubernetes_sd_configs": [{"role": "pod", "api_server": cp.server,
                                           "namespaces": {"names": [namespace]},
                                           "authorization": {"credentials": TOKEN},
                                           "tls_config": {"ca_file": str(cp.ca)}}],
                "relabel_configs": relabel})
    return scrapes
