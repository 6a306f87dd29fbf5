"""``fusion-krm``: the expansion as a KRM function — a ResourceList on stdin, the expanded one on stdout.

For kustomize (an exec transformer), kpt (``kpt fn eval --exec``) and anything else that runs KRM
functions. The same filters as the post-renderer; only the transport differs. On bad input: the same
error as the post-renderer's on standard error, a ResourceList with no items and one ``results``
entry (severity, message, the object and field it is about) on standard output, and exit status 1.
"""

from __future__ import annotations

import sys

from fusion_helm.base.kinds import TAKE_OVER_LAYOUTS
from fusion_helm.cli.io import InputError, fail, output_closed, read_input, version
from fusion_helm.errors import InvalidSpec
from fusion_helm.options import LAYOUT_KEY, TAKE_OVER_KEY, from_function_config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fusion_helm.kio.document import Document
    from fusion_helm.kio.resource_list import ResourceList

PROG = "fusion-krm"
HELP = f"""usage: {PROG} [-h] [--version]

A KRM function: expand every InferenceService (fusioninfer.io/v1alpha1) among the items of the
config.kubernetes.io/v1 ResourceList on standard input into its LeaderWorkerSets and Volcano PodGroup,
and take over LeaderWorkerSets annotated fusioninfer.io/take-over: "true", exactly as fusion-postrender
does; write the ResourceList to standard output. On bad input: the error on standard error and as the
ResourceList's results, no items, exit status 1.

functionConfig (optional): a ConfigMap whose data may set
  {TAKE_OVER_KEY}: "true"          take over every LeaderWorkerSet, annotated or not
  {LAYOUT_KEY}: replica|role  the layout of a taken-over LeaderWorkerSet without the annotation
                                   fusioninfer.io/layout (default: {TAKE_OVER_LAYOUTS[0]})

kustomize:  a transformer annotated config.kubernetes.io/function: {{exec: {{path: fusion-krm}}}},
            kustomize build --enable-alpha-plugins --enable-exec
kpt:        kpt fn eval DIR --exec fusion-krm [-- {TAKE_OVER_KEY}=true]
"""


def run(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(HELP)
        return 0
    if args == ["--version"]:
        sys.stdout.write(version(PROG))
        return 0
    if args:
        print(f"usage: {PROG} [-h] [--version]\n{PROG}: error: unrecognized argument: {args[0]}", file=sys.stderr)
        return 2
    try:
        text = read_input("-")
    except InputError as error:
        sys.stdout.write(_failure(None, error))
        return fail(PROG, error)
    output, refused = respond(text)
    try:
        sys.stdout.write(output)
        sys.stdout.flush()
    except BrokenPipeError:
        return output_closed()
    return 0 if refused is None else fail(PROG, refused)


def respond(text: str) -> tuple[str, InvalidSpec | None]:
    """The ResourceList answering the one in TEXT: its items expanded, or none and the error as its one
    result, which is returned too."""
    from fusion_helm.kio.resource_list import read_resource_list
    from fusion_helm.pipeline import apply

    resource_list: ResourceList | None = None
    try:
        resource_list = read_resource_list(text)
        options = from_function_config(resource_list.function_config)
        return resource_list.write(apply(resource_list.documents, options)), None
    except InvalidSpec as error:
        return _failure(resource_list, error), error


def _failure(resource_list: ResourceList | None, error: InputError | InvalidSpec) -> str:
    """The ResourceList that reports ERROR: no items, one result."""
    from fusion_helm.kio.resource_list import API_VERSIONS, KIND
    from fusion_helm.kio.write import dump

    result: dict[str, Any] = {"message": str(error), "severity": "error"}
    subject = getattr(error, "subject", None)
    if resource_list is not None and subject in resource_list.documents:
        result.update(_about(subject))
    if isinstance(error, InvalidSpec) and error.path:
        result["field"] = {"path": error.path}
    api_version = resource_list.api_version if resource_list is not None else API_VERSIONS[0]
    return dump({"apiVersion": api_version, "kind": KIND, "items": [], "results": [result]})


_PATHS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
_INDEXES = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")


def _about(document: Document) -> dict[str, Any]:
    """A result's resourceRef (and file, where the item says which) for the item DOCUMENT."""
    head = document.head
    reference: dict[str, str] = {key: head[key] for key in ("apiVersion", "kind") if key in head}
    metadata = document.metadata
    reference.update({key: metadata[key] for key in ("name", "namespace") if isinstance(metadata.get(key), str)})
    about: dict[str, Any] = {"resourceRef": reference}
    annotations = metadata.get("annotations") or {}
    path = next((annotations[key] for key in _PATHS if isinstance(annotations.get(key), str)), None)
    if path is not None:
        about["file"] = {"path": path}
        index = next((annotations[key] for key in _INDEXES if isinstance(annotations.get(key), str)), "")
        if index.isdigit():
            about["file"]["index"] = int(index)
    return about


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
