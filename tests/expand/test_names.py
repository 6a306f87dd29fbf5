"""Every object the expansion writes has a name no other object of its kind has, and one the API server takes:
refused by field before anything is written where two features would name two objects alike."""

from __future__ import annotations

import pytest

from fusion_helm.errors import InvalidSpec
from fusion_helm.expand.names import check_unique_names
from tests.builders import SCRAPED_FROM_MONITORING, render, role, service
from tests.expand import alone
from tests.support import router

MONITORED = {"monitoring": {"podMonitor": {"enabled": True}}, **SCRAPED_FROM_MONITORING}


def test_a_serving_role_named_like_the_picker_is_refused_by_its_name() -> None:
    """Role ``router-epp``'s budget is named as the router ``router``'s picker's is (and so would its PodMonitor
    be): refused at the name of the router, whose object comes second."""
    with pytest.raises(InvalidSpec) as error:
        render(service(role("router-epp", "worker", nodes=2), router(), **MONITORED))
    assert error.value.path == "spec.roles[1].name"
    assert error.value.message == ("makes the PodDisruptionBudget 'svc-router-epp', and so does role 'router-epp'; "
                                   "rename one of them")


def test_a_frontend_named_like_the_sidecar_s_account_is_refused_by_its_name() -> None:
    """The decoders' sidecar reads the pool with a ServiceAccount, Role and RoleBinding ``svc-router-pd-sidecar``:
    a frontend ``router-pd-sidecar`` would have its own so named."""
    def sglang(name: str, component_type: str, mode: str) -> dict[str, object]:
        return role(name, component_type, command=["python3", "-m", "sglang.launch_server"],
                    args=["--model-path", "m", "--port", "30000", "--disaggregation-mode", mode])

    frontend = {"name": "router-pd-sidecar", "componentType": "frontend", "frontend": {"kind": "sglang-router"},
                "template": {"spec": {"containers": [{"name": "r", "image": "lmsysorg/sglang:v0.5.23"}]}}}
    with pytest.raises(InvalidSpec) as error:
        render(service(sglang("p", "prefiller", "prefill"), sglang("d", "decoder", "decode"), router(), frontend))
    assert error.value.path == "spec.roles[3].name"
    assert "ServiceAccount 'svc-router-pd-sidecar', and so does role 'router'" in error.value.message


def test_the_check_names_the_role_that_makes_the_second_object() -> None:
    """On objects made by hand: the second of a kind and name is refused at its role's name, or the
    service's where no role makes it."""
    model = alone.model(service(role("a", "worker"), role("b", "worker")))
    first = {"kind": "ConfigMap", "metadata": {"name": "x", "labels": {"fusioninfer.io/role-name": "a"}}}
    second = {"kind": "ConfigMap", "metadata": {"name": "x", "labels": {"fusioninfer.io/role-name": "b"}}}
    other_kind = {"kind": "Secret", "metadata": {"name": "x"}}
    check_unique_names(model, [first, other_kind])
    with pytest.raises(InvalidSpec) as error:
        check_unique_names(model, [first, other_kind, second])
    assert error.value.path == "spec.roles[1].name"
    with pytest.raises(InvalidSpec) as error:
        check_unique_names(model, [first, {"kind": "ConfigMap", "metadata": {"name": "x"}}])
    assert error.value.path == "metadata.name"


def test_a_fetch_job_s_name_must_be_a_label_value() -> None:
    """A Job's pods carry its name as a label value: at most 63 characters, with the 17 of ``-fetch-<digest>``."""
    cached = {"model": {"source": "hf://org/m", "revision": "a" * 40}, "modelCache": {"size": "10Gi"}}
    longest = service(role("w", "worker"), **cached)
    longest["metadata"]["name"] = "s" * 46
    render(longest)
    longest["metadata"]["name"] = "s" * 47
    with pytest.raises(InvalidSpec) as error:
        render(longest)
    assert error.value.path == "metadata.name" and "fetch Job name" in error.value.message
