"""The namespaced RBAC of what runs beside the engines (the picker, the prefill/decode sidecar): a Role
that only reads, bound to ServiceAccounts."""

from __future__ import annotations

from fusion_helm.base.kinds import RBAC_ROLE, ROLE_BINDING, SERVICE_ACCOUNT, Kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

READ = ("get", "list", "watch")


def reads(group: str, plurals: Iterable[str]) -> dict[str, Any]:
    """A rule that reads the resources PLURALS of GROUP."""
    return {"apiGroups": [group], "resources": list(plurals), "verbs": list(READ)}


def reads_kind(kind: Kind) -> dict[str, Any]:
    return reads(kind.group, [kind.plural])


def reader_role(name: str, metadata: Callable[[], dict[str, Any]], rules: list[dict[str, Any]],
                accounts: Iterable[str], namespace: str | None) -> list[dict[str, Any]]:
    """The Role NAME with RULES, and its RoleBinding to the ServiceAccounts ACCOUNTS of NAMESPACE, each
    with METADATA's metadata."""
    subjects = [{"kind": SERVICE_ACCOUNT.kind, "name": account, **({"namespace": namespace} if namespace else {})}
                for account in accounts]
    return [
        {"apiVersion": RBAC_ROLE.api_version, "kind": RBAC_ROLE.kind, "metadata": metadata(), "rules": rules},
        {"apiVersion": ROLE_BINDING.api_version, "kind": ROLE_BINDING.kind, "metadata": metadata(),
         "roleRef": {"apiGroup": RBAC_ROLE.group, "kind": RBAC_ROLE.kind, "name": name}, "subjects": subjects},
    ]
