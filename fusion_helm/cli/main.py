"""``fusion-helm``: the expansion on files outside Helm (render, validate), what it means for a cluster
(plan, diff), and a release's status (status)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from fusion_helm import advice, diff
from fusion_helm.base.kinds import HYPER_NODE, LEADER_WORKER_SET, POD, TAKE_OVER_LAYOUTS
from fusion_helm.base.labels import LABEL_ROLE_NAME, LABEL_SERVICE
from fusion_helm.cli.io import InputError, fail, output_closed, read_input, stream_name, version
from fusion_helm.convert.leader_worker_set import ROLE_NAME as TAKEN_OVER_ROLE
from fusion_helm.errors import InvalidSpec
from fusion_helm.kio.document import read_documents
from fusion_helm.model import KIND, is_inference_service, parse_inference_service
from fusion_helm.options import LAYOUT_FLAG, LAYOUT_HELP, TAKE_OVER_FLAG, TAKE_OVER_HELP, Options
from fusion_helm.pipeline import apply, render
from fusion_helm.plan import place_all
from fusion_helm.plan.nodes import PlanError, TopologyError, cluster_of
from fusion_helm.plan.report import to_json, to_tree
from fusion_helm.plan.services import KINDS as PLANNED_KINDS
from fusion_helm.programs import status

if TYPE_CHECKING:
    from fusion_helm.cli.cluster import ClusterClient

    Commands = argparse._SubParsersAction[argparse.ArgumentParser]

PROG = "fusion-helm"
COMPLETION_SHELLS = ("bash", "zsh")
PLUGINS = Path(__file__).resolve().parent.parent / "plugins"
"""The helm plugins, shipped inside the package."""
T = TypeVar("T")
U = TypeVar("U")


def _options(args: argparse.Namespace) -> Options:
    return Options(args.take_over_lws, args.take_over_layout)


def _render(args: argparse.Namespace) -> int:
    outputs = []
    for name in args.files:
        output = _in_file(name, lambda text: render(text, _options(args)), read_input(name))
        if output and not output.endswith("\n"):
            output += "\n"
        outputs.append(output)
    sys.stdout.write("".join(outputs))
    return 0


def _validate(args: argparse.Namespace) -> int:
    reports = []
    for name in args.files:
        documents = _in_file(name, read_documents, read_input(name))
        if not documents:  # `helm template … | fusion-helm validate -` where helm failed: no verdict on nothing
            raise InputError(f"{stream_name(name)}: no YAML documents to validate (if this is a pipe, the "
                             f"command before it printed nothing: read its error above)")
        expanded = _in_file(name, lambda docs: apply(docs, _options(args)), documents)
        services = sum(1 for doc in documents if doc.could_be(KIND) and is_inference_service(doc.head))
        reports.append(f"{stream_name(name)}: valid ({services} InferenceService(s), "
                       f"{sum(1 for doc in expanded if doc.generated)} generated object(s))")
        for line in advice.stream_warnings(expanded):
            print(f"{PROG}: warning: {stream_name(name)}: {line}", file=sys.stderr)
    print("\n".join(reports))
    return 0


def _plan(args: argparse.Namespace) -> int:
    hyper_nodes = None if args.topology is None else _hyper_nodes(args.topology)
    try:
        cluster, nodes = cluster_of(args.gpus_per_node, hyper_nodes=hyper_nodes, gpus=args.gpus, nodes=args.nodes)
        plans = place_all([obj for name in args.files for obj in _expanded_objects(name, PLANNED_KINDS)], cluster,
                          at_maximum=args.autoscaled == "maximum")
    except TopologyError as error:  # the HyperNodes, or a networkTopology they cannot meet: named by their file
        raise InputError(f"{stream_name(args.topology)}: {error}") from None
    except PlanError as error:
        raise InputError(str(error)) from None
    if args.output == "json":
        print(json.dumps(to_json(plans, nodes, args.gpus_per_node), indent=2))
    else:
        sys.stdout.write(to_tree(plans, nodes, args.gpus_per_node))
    return 0


def _hyper_nodes(name: str) -> list[dict[str, Any]]:
    """The HyperNodes in a file (--topology)."""
    documents = _in_file(name, read_documents, read_input(name))
    return [obj for doc in documents if doc.could_be(HYPER_NODE.kind)
            and isinstance(obj := _in_file(name, lambda d: d.obj, doc), dict) and obj.get("kind") == HYPER_NODE.kind]


def _diff(args: argparse.Namespace) -> int:
    current, new = (_expanded_objects(name, diff.KINDS) for name in (args.current, args.new))
    found = diff.changes(current, new)
    if args.output == "json":
        print(json.dumps(diff.to_json(found), indent=2))
    else:
        sys.stdout.write(diff.to_table(found))
    return 0


def _status(args: argparse.Namespace) -> int:
    try:
        from fusion_helm.cli.cluster import ClusterClient  # the kubernetes client: only for this command
    except ImportError:
        raise InputError("status needs the Kubernetes client: pip install 'fusioninfer-helm[cluster]'") from None

    cluster = ClusterClient(args.kubeconfig, args.context, args.request_timeout)
    # `helm fusion status` runs with the namespace helm resolved in HELM_NAMESPACE
    namespace = args.namespace or os.environ.get("HELM_NAMESPACE") or cluster.default_namespace
    if args.lws:
        return _taken_over_status(cluster, args.lws, namespace, args.output)
    if not args.release:
        raise InputError("give a RELEASE, or --lws NAME for a taken-over LeaderWorkerSet")
    obj = cluster.release_service(args.release, namespace)
    name = obj["metadata"]["name"]
    _in_file(f"{KIND} {name} (namespace {namespace})", parse_inference_service, obj)  # one clear error if bad
    pods, workloads = status.observe(cluster, namespace, obj)
    statuses, result = status.service_status(obj, pods, status.now(), workloads)
    if args.write:
        cluster.write_status(name, namespace, result)
    if args.output == "json":
        print(json.dumps({"name": name, "namespace": namespace, "status": result}, indent=2))
    else:
        sys.stdout.write(status.to_table(name, statuses, status.rolling(obj["spec"], workloads),
                                         status.weights(obj["spec"], workloads),
                                         status.signals_read(name, obj["spec"], workloads)))
    return 0


def _taken_over_status(cluster: ClusterClient, name: str, namespace: str, output: str) -> int:
    ours = f"{LABEL_SERVICE}={name},{LABEL_ROLE_NAME}={TAKEN_OVER_ROLE}"
    replicas = cluster.items(LEADER_WORKER_SET, namespace, ours)
    if not replicas:
        raise InputError(f"no taken-over LeaderWorkerSet {name} in namespace {namespace} (no LeaderWorkerSets "
                         f"labelled {LABEL_SERVICE}={name}, {LABEL_ROLE_NAME}={TAKEN_OVER_ROLE})")
    result = status.taken_over_status(
        name, replicas, lambda: cluster.items(POD, namespace, f"{LABEL_SERVICE}={name}"), status.now())
    if output == "json":
        print(json.dumps({"name": name, "namespace": namespace, "kind": LEADER_WORKER_SET.kind, "status": result},
                         indent=2))
    else:
        sys.stdout.write(status.taken_over_table(name, replicas, result))
    return 0


def _expanded_objects(name: str, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    """The objects of KINDS in a file, after the expansion."""
    documents = _in_file(name, apply, _in_file(name, read_documents, read_input(name)))
    return [obj for doc in documents if any(doc.could_be(kind) for kind in kinds) and doc.kind in kinds
            and isinstance(obj := _in_file(name, lambda d: d.obj, doc), dict)]


def _in_file(name: str, step: Callable[[T], U], value: T) -> U:
    """Run one step on a file's content; its errors are reported under the file's name."""
    try:
        return step(value)
    except InvalidSpec as error:
        raise InputError(f"{stream_name(name)}: {error}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="FusionInfer InferenceServices outside Helm: expand and check them, preview their "
                    "placement and upgrades, report a release's status.",
    )
    parser.add_argument("--version", action=_Version, help="show the installed version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _file_commands(commands)
    _status_command(commands)
    _tool_commands(commands, parser)
    return parser



def _file_commands(commands: Commands) -> None:
    """The commands on multi-document YAML files: render, validate, plan, diff."""
    def command(name: str, run: Callable[[argparse.Namespace], int], summary: str, description: str,
                files: tuple[str, ...] = ()) -> argparse.ArgumentParser:
        """A subcommand on multi-document YAML files (- for standard input): any number, or FILES."""
        sub = commands.add_parser(name, help=summary, description=f"{description} Use - for standard input.")
        if files:
            for file in files:
                sub.add_argument(file.lower(), metavar=file, help="YAML file, or - for stdin")
        else:
            sub.add_argument("files", nargs="+", metavar="FILE", help="YAML file, or - for stdin")
        sub.set_defaults(run=run)
        return sub

    render_cmd = command(
        "render", _render, "expand InferenceServices in YAML files and print the result",
        "Expand every InferenceService in the given multi-document YAML files into its LeaderWorkerSets "
        "and PodGroup, take over the LeaderWorkerSets annotated fusioninfer.io/take-over: \"true\", and print "
        "all documents to standard output; other documents pass through unchanged. Nothing is printed "
        "unless every file is valid.")
    validate_cmd = command(
        "validate", _validate, "check InferenceServices in YAML files without printing them",
        "Check every InferenceService (and LeaderWorkerSet to take over) in the given files as the post-renderer "
        "would (schema, role names, name lengths, commands) and report one line per file. Exits non-zero with the "
        "first error.")
    for sub in (render_cmd, validate_cmd):
        sub.add_argument(TAKE_OVER_FLAG, action="store_true", help=TAKE_OVER_HELP)
        sub.add_argument(LAYOUT_FLAG, choices=TAKE_OVER_LAYOUTS, default=TAKE_OVER_LAYOUTS[0], help=LAYOUT_HELP)
    plan_cmd = command(
        "plan", _plan, "preview which replicas a cluster of identical GPU nodes can place",
        "Expand the InferenceServices in the given files and play the generated PodGroups and "
        "LeaderWorkerSets onto identical GPU nodes as Volcano would: which replicas are placed, and each "
        "service's state (full capacity, partial, blocked). With --topology, which HyperNode each replica a "
        "networkTopology bounds fits within. Counts nvidia.com/gpu only.")
    diff_cmd = command(
        "diff", _diff, "what an upgrade will do to a release's LeaderWorkerSets and PodGroups",
        "Compare the current release (`helm get manifest RELEASE`) with the new render (`helm template` with "
        "the new values, post-rendered or not): each LeaderWorkerSet and PodGroup is created, deleted, "
        "restarted (its pods are replaced at once), rolling (layout role: its groups are replaced one after "
        "another, from its partition up), updated (without touching pods) or unchanged.",
        files=("CURRENT", "NEW"))
    diff_cmd.add_argument("-o", "--output", choices=["table", "json"], default="table")
    size = plan_cmd.add_mutually_exclusive_group(required=True)
    size.add_argument("--gpus", type=_positive, help="GPUs in the cluster, in nodes of --gpus-per-node")
    size.add_argument("--nodes", type=_positive, help="nodes in the cluster")
    size.add_argument("--topology", metavar="FILE",
                      help="the cluster's HyperNodes (topology.volcano.sh/v1alpha1, as `kubectl get hypernodes -o "
                           "yaml` prints them; members by exactMatch): their nodes, --gpus-per-node each, placed by "
                           "network topology as Volcano does")
    plan_cmd.add_argument("--gpus-per-node", type=_positive, default=8, metavar="G", help="default 8")
    plan_cmd.add_argument("--autoscaled", choices=["minimum", "maximum"], default="minimum",
                          help="plan each autoscaled role at its autoscaler's minimum (what it starts with; the "
                               "default) or maximum (its peak: whether the cluster holds it)")
    plan_cmd.add_argument("-o", "--output", choices=["tree", "json"], default="tree")


def _status_command(commands: Commands) -> None:
    status_cmd = commands.add_parser(
        "status", help="each role's status, from the live cluster",
        description="Find the InferenceService of a helm release and report each role's status from its pods: "
                    "desired and ready replicas (a replica is ready when all its pods are), nodes per replica, "
                    "ready pods, phase (Pending, Deploying, Running, Failed); in layouts role and disaggregated, "
                    "also each role still rolling (the Progressing condition). --write also stores it in the "
                    "InferenceService's status subresource.")
    status_cmd.add_argument("release", metavar="RELEASE", nargs="?")
    status_cmd.add_argument("--lws", metavar="NAME",
                            help="instead of a release's InferenceService: the taken-over LeaderWorkerSet NAME, "
                                 "reported as LWS does (replicas, readyReplicas, Available, Progressing)")
    status_cmd.add_argument("-n", "--namespace", help="default: $HELM_NAMESPACE, else the kubeconfig context's")
    status_cmd.add_argument("--kubeconfig", help="default: $KUBECONFIG or ~/.kube/config")
    status_cmd.add_argument("--context")
    status_cmd.add_argument("--write", action="store_true", help="write the status subresource")
    status_cmd.add_argument("--request-timeout", metavar="SECONDS", type=float, default=30,
                            help="give up on an API server that does not answer a call within it (default 30)")
    status_cmd.add_argument("-o", "--output", choices=["table", "json"], default="table")
    status_cmd.set_defaults(run=_status)


def _tool_commands(commands: Commands, parser: argparse.ArgumentParser) -> None:
    """plugin-dir and completion (of PARSER's commands)."""
    plugin_cmd = commands.add_parser(
        "plugin-dir", help="where this installation's helm plugins are, to `helm plugin install` them",
        description="Print the directory of one of the helm plugins installed with this package: fusion-postrender "
                    "(Helm 4's postrenderer/v1 plugin) or fusion (`helm fusion`, Helm 3 and 4). For example: "
                    'helm plugin install "$(fusion-helm plugin-dir fusion-postrender)"')
    plugin_cmd.add_argument("plugin", choices=sorted(path.name for path in PLUGINS.iterdir() if path.is_dir()))
    plugin_cmd.set_defaults(run=_plugin_dir)
    completion_cmd = commands.add_parser(
        "completion", help="a shell's completion of fusion-helm's commands and flags",
        description="Print the completion script of fusion-helm for SHELL: its commands, their flags and the "
                    "choices of those that take one, files elsewhere. For example, in ~/.bashrc: "
                    'eval "$(fusion-helm completion bash)"; in ~/.zshrc: eval "$(fusion-helm completion zsh)".')
    completion_cmd.add_argument("shell", choices=COMPLETION_SHELLS)
    completion_cmd.set_defaults(run=lambda args: _completion(parser, args.shell))


class _Version(argparse.Action):
    """``--version``, its line read from the installed package only when asked for."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        sys.stdout.write(version(PROG))
        parser.exit()


def _completion(parser: argparse.ArgumentParser, shell: str) -> int:
    from fusion_helm.cli.completion import script

    sys.stdout.write(script(PROG, parser, shell))
    return 0


def _plugin_dir(args: argparse.Namespace) -> int:
    print(PLUGINS / args.plugin)
    return 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result: int = args.run(args)
        sys.stdout.flush()
    except (InputError, InvalidSpec) as error:
        return fail(PROG, error)
    except BrokenPipeError:
        return output_closed()
    return result


if __name__ == "__main__":
    sys.exit(main())
