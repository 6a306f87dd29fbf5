"""The Python API: InferenceService releases through pyhelm3, rendered through the post-renderer.

    from fusion_helm.release import InferenceServices
    services = InferenceServices("charts/fusioninfer", kubeconfig="~/.kube/config")
    await services.install("qwen", {"roles": [...]}, namespace="llm")
    await services.scale_role("qwen", "decode", 6, namespace="llm")
    await services.uninstall("qwen", namespace="llm")

pyhelm3 has no post-renderer option; PostRenderingCommand adds one to its Command, so every helm
call that renders the chart passes `--post-renderer`: the fusion-postrender executable for Helm 3,
the fusion-postrender plugin (which must be installed) for Helm 4.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyhelm3

POST_RENDERER = "fusion-postrender"


class ReleaseError(RuntimeError):
    pass


class PostRenderingCommand(pyhelm3.Command):  # type: ignore[misc]
    """pyhelm3's Command; the commands that render a chart get ``--post-renderer``."""

    RENDERING = frozenset({"install", "upgrade", "template"})

    def __init__(self, *, post_renderer: str, **options: Any) -> None:
        super().__init__(**options)
        self.post_renderer = post_renderer

    async def run(self, command: list[Any], input: bytes | None = None) -> bytes:
        if command and command[0] in self.RENDERING:
            command = [*command, "--post-renderer", self.post_renderer]
        output: bytes = await super().run(command, input)
        return output


def post_renderer_for(helm: str) -> str:
    """What `--post-renderer` must name for this helm: Helm 3 runs an executable, Helm 4 a plugin."""
    version = subprocess.run([helm, "version", "--template", "{{.Version}}"], capture_output=True, text=True,
                             check=True).stdout.strip()
    if version.startswith("v3."):
        found = shutil.which(POST_RENDERER) or str(Path(sys.executable).with_name(POST_RENDERER))
        if not Path(found).is_file():
            raise ReleaseError(f"{POST_RENDERER} is not on PATH: pip install fusioninfer-helm")
        return found
    plugins = subprocess.run([helm, "plugin", "list"], capture_output=True, text=True, check=True).stdout
    if not any(line.split()[:1] == [POST_RENDERER] for line in plugins.splitlines()[1:]):
        raise ReleaseError(f"helm {version} post-renders only through plugins and {POST_RENDERER} is not installed: "
                           f"helm plugin install \"$(fusion-helm plugin-dir {POST_RENDERER})\"")
    return POST_RENDERER


class InferenceServices:
    """install / upgrade / scale a role / uninstall, one release per InferenceService."""

    def __init__(self, chart: str | Path, *, helm: str = "helm", kubeconfig: str | Path | None = None,
                 kubecontext: str | None = None, timeout: str = "5m") -> None:
        self.chart_ref = chart
        command = PostRenderingCommand(post_renderer=post_renderer_for(helm), executable=helm,
                                       kubeconfig=kubeconfig, kubecontext=kubecontext, default_timeout=timeout)
        self.client = pyhelm3.Client(command, executable=helm)

    async def install(self, release: str, values: dict[str, Any], *, namespace: str) -> Any:
        """Install, or upgrade to VALUES when the release exists; returns pyhelm3's ReleaseRevision."""
        chart = await self.client.get_chart(self.chart_ref)
        return await self.client.install_or_upgrade_release(release, chart, values, namespace=namespace)

    upgrade = install

    async def values(self, release: str, *, namespace: str) -> dict[str, Any]:
        """The release's values, defaults included."""
        revision = await self.client.get_current_revision(release, namespace=namespace)
        values: dict[str, Any] = await revision.values(computed=True)
        return values

    async def scale_role(self, release: str, role: str, replicas: int, *, namespace: str) -> Any:
        """Upgrade with one role's replicas changed and every other value as it is."""
        values = await self.values(release, namespace=namespace)
        matching = [r for r in values.get("roles", []) if r.get("name") == role]
        if not matching:
            names = ", ".join(r.get("name", "?") for r in values.get("roles", []))
            raise ReleaseError(f"release {release} has no role {role} (roles: {names})")
        matching[0]["replicas"] = replicas
        return await self.install(release, values, namespace=namespace)

    async def uninstall(self, release: str, *, namespace: str, wait: bool = True) -> None:
        await self.client.uninstall_release(release, namespace=namespace, wait=wait)
