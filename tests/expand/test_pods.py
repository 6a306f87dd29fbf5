"""The one walk over a role's pod templates (RoleTemplates.map): which templates a change to all, the serving
or the leading pods of a replica is made to."""

from __future__ import annotations

from typing import Any

import pytest

from fusion_helm.expand.pods import Pod, Pods, RoleTemplates


def template(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "engine"}]}}


def marked(pod: Pod) -> Pod:
    return pod.with_template({**pod.template, "metadata": {"name": f"{pod.template['metadata']['name']}+"}})


def names(templates: RoleTemplates) -> tuple[str | None, str]:
    leader = templates.leader.template["metadata"]["name"] if templates.leader is not None else None
    return leader, templates.worker.template["metadata"]["name"]


SINGLE = RoleTemplates(size=1, worker=Pod(template("pod"), None))
LEADER_AND_WORKERS = RoleTemplates(size=4, worker=Pod(template("worker"), None), leader=Pod(template("leader"), None))
EVERY_NODE_SERVES = RoleTemplates(size=4, worker=Pod(template("worker"), None), leader=Pod(template("leader"), None),
                                  workers_serve=True)
ONE_TEMPLATE = RoleTemplates(size=4, worker=Pod(template("pod"), None))
"""custom's replicas without a workerTemplate: every pod runs the role's template, the leader (index 0) serves."""


@pytest.mark.parametrize(("templates", "which", "expected"), [
    (SINGLE, Pods.ALL, (None, "pod+")),
    (SINGLE, Pods.SERVING, (None, "pod+")),
    (SINGLE, Pods.LEADERS, (None, "pod+")),
    (LEADER_AND_WORKERS, Pods.ALL, ("leader+", "worker+")),
    (LEADER_AND_WORKERS, Pods.SERVING, ("leader+", "worker")),
    (LEADER_AND_WORKERS, Pods.LEADERS, ("leader+", "worker")),
    (EVERY_NODE_SERVES, Pods.ALL, ("leader+", "worker+")),
    (EVERY_NODE_SERVES, Pods.SERVING, ("leader+", "worker+")),
    (EVERY_NODE_SERVES, Pods.LEADERS, ("leader+", "worker")),
    (ONE_TEMPLATE, Pods.ALL, (None, "pod+")),
    (ONE_TEMPLATE, Pods.SERVING, ("pod+", "pod")),
    (ONE_TEMPLATE, Pods.LEADERS, ("pod+", "pod")),
])
def test_a_change_reaches_exactly_the_templates_of_the_pods_it_is_for(
        templates: RoleTemplates, which: Pods, expected: tuple[str | None, str]) -> None:
    assert names(templates.map(which, marked)) == expected


@pytest.mark.parametrize("templates", [SINGLE, LEADER_AND_WORKERS, EVERY_NODE_SERVES, ONE_TEMPLATE])
@pytest.mark.parametrize("which", list(Pods))
def test_the_templates_read_are_those_a_change_is_made_to(templates: RoleTemplates, which: Pods) -> None:
    seen: list[str] = []

    def record(pod: Pod) -> Pod:
        seen.append(pod.template["metadata"]["name"])
        return pod

    templates.map(which, record)
    assert sorted(seen) == sorted(pod.template["metadata"]["name"] for pod in templates.pods(which))


def test_the_worker_template_is_labelled_serving_where_a_pod_made_from_it_serves() -> None:
    assert SINGLE.worker_serves and ONE_TEMPLATE.worker_serves and EVERY_NODE_SERVES.worker_serves
    assert not LEADER_AND_WORKERS.worker_serves
    # Once the leader has a template of its own, the workers' serves no more.
    assert not ONE_TEMPLATE.map(Pods.SERVING, marked).worker_serves
