"""A container's share of a kubelet's work, for the runners that run pods as processes here
(tests/controlplane/hook_kubelet.py, tests/controlplane/serving.py): its environment, and its volumes.

- **Environment**: values, the downward API's fields, Secrets' keys, and ``$(VAR)`` references, as the
  kubelet resolves them.
- **Volumes**: each a folder, laid out as the kubelet lays it out — a ConfigMap's or Secret's keys as files,
  an emptyDir empty, a claim the folder of the PersistentVolume bound to it (``hostPath`` or ``local``).
  The container runs in a mount namespace of its own where each of its volumeMounts is a bind mount of its
  volume's folder (a subPath's folder made first, as the kubelet makes it; read-only where the mount says
  so), and its terminationMessagePath a file of the pod's. So the container sees exactly the paths it was
  rendered with; nothing is mounted outside its namespace. The mount points made on the way (empty folders,
  an empty /dev/termination-log) stay while the session runs — removing one would unmount it under every
  container that has it — and go at its end (`remove_mount_points`, tests/conftest.py).

Run as a program (in the container's mount namespace: ``unshare --mount``), it binds the mounts it is given
and becomes the container's command. Standard library only: it runs by an interpreter without site-packages.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    import kubernetes

VARIABLE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
TERMINATION_LOG = "/dev/termination-log"
_MADE: list[Path] = []
"""Mount points made on this machine's file system (the outermost new folder or file of each)."""
_MAKING = threading.Lock()


def environment(core: kubernetes.client.CoreV1Api, pod: kubernetes.client.V1Pod, address: str,
                container: Mapping[str, Any]) -> dict[str, str]:
    """CONTAINER's env as the kubelet sets it for POD at ADDRESS."""
    fields = {"metadata.name": pod.metadata.name, "metadata.namespace": pod.metadata.namespace,
              "status.podIP": address, "spec.serviceAccountName": pod.spec.service_account_name or "default"}
    env: dict[str, str] = {}
    for variable in container.get("env") or []:
        source = variable.get("valueFrom") or {}
        if "value" in variable:
            env[variable["name"]] = expand(variable["value"], env)
        elif "fieldRef" in source:
            env[variable["name"]] = fields[source["fieldRef"]["fieldPath"]]
        elif "secretKeyRef" in source:
            reference = source["secretKeyRef"]
            data = core.read_namespaced_secret(reference["name"], pod.metadata.namespace).data or {}
            env[variable["name"]] = base64.b64decode(data[reference["key"]]).decode()
    return env


def expand(text: str, env: Mapping[str, str]) -> str:
    """TEXT's ``$(VAR)`` references resolved from ENV (an unknown one kept as written, as the kubelet keeps it)."""
    return VARIABLE.sub(lambda found: env.get(found.group(1), found.group(0)), text)


def volumes(core: kubernetes.client.CoreV1Api, namespace: str, spec: Mapping[str, Any], into: Path
            ) -> dict[str, Path]:
    """Each volume of the pod SPEC (as the API serializes it) → its folder, laid out under INTO."""
    folders: dict[str, Path] = {}
    for volume in spec.get("volumes") or []:
        folder = into / "volumes" / volume["name"]
        if "configMap" in volume or "secret" in volume:
            if "configMap" in volume:
                data = core.read_namespaced_config_map(volume["configMap"]["name"], namespace).data or {}
                items = volume["configMap"].get("items")
            else:
                data = {key: base64.b64decode(value).decode()
                        for key, value in (core.read_namespaced_secret(volume["secret"]["secretName"], namespace
                                                                       ).data or {}).items()}
                items = volume["secret"].get("items")
            for item in items or [{"key": key, "path": key} for key in data]:
                (folder / item["path"]).parent.mkdir(parents=True, exist_ok=True)
                (folder / item["path"]).write_text(data[item["key"]])
        elif "projected" in volume:  # the service account's token, its CA and namespace (kube-api-access)
            for source in volume["projected"]["sources"]:
                for path, text in _projected(core, namespace, spec, source).items():
                    (folder / path).parent.mkdir(parents=True, exist_ok=True)
                    (folder / path).write_text(text)
        elif "emptyDir" in volume:
            folder.mkdir(parents=True, exist_ok=True)
        elif "persistentVolumeClaim" in volume:
            claim = core.read_namespaced_persistent_volume_claim(volume["persistentVolumeClaim"]["claimName"],
                                                                 namespace)
            if claim.status.phase != "Bound":
                raise RuntimeError(f"claim {claim.metadata.name} is {claim.status.phase}, not Bound")
            bound = core.read_persistent_volume(claim.spec.volume_name).spec
            folder = Path((bound.host_path or bound.local).path)
        else:
            raise RuntimeError(f"no volume of this kind here: {sorted(volume)}")
        folders[volume["name"]] = folder
    return folders


def _projected(core: kubernetes.client.CoreV1Api, namespace: str, spec: Mapping[str, Any],
               source: Mapping[str, Any]) -> dict[str, str]:
    """One source of a projected volume: path → text."""
    if "serviceAccountToken" in source:
        import kubernetes  # only here: the program below runs without site-packages

        request = kubernetes.client.AuthenticationV1TokenRequest(spec=kubernetes.client.V1TokenRequestSpec(
            audiences=[], expiration_seconds=source["serviceAccountToken"].get("expirationSeconds", 3607)))
        token = core.create_namespaced_service_account_token(spec.get("serviceAccountName") or "default", namespace,
                                                             request)
        return {source["serviceAccountToken"]["path"]: token.status.token}
    if "configMap" in source:
        data = core.read_namespaced_config_map(source["configMap"]["name"], namespace).data or {}
        return {item["path"]: data[item["key"]] for item in source["configMap"].get("items") or
                [{"key": key, "path": key} for key in data]}
    if "downwardAPI" in source:
        fields = {"metadata.namespace": namespace}
        return {item["path"]: fields[item["fieldRef"]["fieldPath"]] for item in source["downwardAPI"]["items"]}
    raise RuntimeError(f"no projected source of this kind here: {sorted(source)}")


def in_mounts(container: Mapping[str, Any], folders: Mapping[str, Path], termination: Path,
              argv: list[str]) -> list[str]:
    """ARGV run as CONTAINER, in a mount namespace of its own with its volumeMounts bound from FOLDERS
    (`volumes`) and its termination message going to TERMINATION."""
    binds: list[tuple[str, str, bool]] = []
    for mount in container.get("volumeMounts") or []:
        source = folders[mount["name"]]
        if mount.get("subPath"):
            source = source / mount["subPath"]
            source.mkdir(parents=True, exist_ok=True)
        binds.append((str(source), mount["mountPath"], bool(mount.get("readOnly"))))
    termination.touch()
    binds.append((str(termination), container.get("terminationMessagePath") or TERMINATION_LOG, False))
    # A volume over the folder of the program itself (an emptyDir at /tmp, where a clone or FUSION_CACHE
    # may be) would hide it: that one is not bound, and the container sees this machine's folder there.
    program = {Path(argv[0]), Path(argv[0]).resolve()}
    binds = [bind for bind in binds if not any(path.is_relative_to(bind[1]) for path in program)]
    for _, target, _ in binds:
        _mount_point(Path(target), file=target == binds[-1][1])
    return ["unshare", "--mount", "--propagation", "private", "--", sys.executable, "-S", "-E", __file__,
            json.dumps(binds), "--", *argv]


def _mount_point(target: Path, file: bool) -> None:
    """TARGET made where it is missing (a file for FILE, else a folder), the outermost part made noted. One
    at a time: the hook pods run in threads, and two may need the same mount point at once."""
    with _MAKING:
        if target.exists():
            return
        outermost = target
        while not outermost.parent.exists():
            outermost = outermost.parent
        target.parent.mkdir(parents=True, exist_ok=True)
        if file:
            target.touch()
        else:
            target.mkdir()
        _MADE.append(outermost)


def remove_mount_points() -> None:
    """The mount points `in_mounts` made, removed where they are still empty."""
    while _MADE:
        made = _MADE.pop()
        with contextlib.suppress(OSError):  # not empty: something of this machine's is there now, kept
            if made.is_dir():
                for path in sorted(made.rglob("*"), reverse=True):
                    path.rmdir()
                made.rmdir()
            elif made.stat().st_size == 0:
                made.unlink()


def _become(binds: list[list[Any]], argv: list[str]) -> None:
    # A mount over a folder where another mount's source is (an emptyDir at /tmp) goes after that one.
    sources = [Path(source) for source, _, _ in binds]
    binds = sorted(binds, key=lambda bind: any(source.is_relative_to(bind[1]) for source in sources))
    for source, target, read_only in binds:
        subprocess.run(["mount", "--bind", source, target], check=True)
        if read_only:
            subprocess.run(["mount", "-o", "remount,bind,ro", target], check=True)
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    _become(json.loads(sys.argv[1]), sys.argv[3:])
