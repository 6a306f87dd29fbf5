"""``fusion-postrender``: the Helm post-renderer — a multi-document stream on stdin, expanded on stdout.

It runs inside every helm call, so it starts lean: its two flags are read by hand (argparse costs
more to import than the rest of a small render), and the pipeline loads the model and YAML library
only when the stream has something for them.
"""

from __future__ import annotations

import os
import sys

from fusion_helm.cli.io import InputError, fail, read_input
from fusion_helm.errors import InvalidSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

PROG = "fusion-postrender"
USAGE = f"usage: {PROG} [-h] [--take-over-lws]"
HELP = f"""{USAGE}

Expand every InferenceService (fusioninfer.io/v1alpha1) in the YAML stream on standard input into
its LeaderWorkerSets and Volcano PodGroup, and write the stream to standard output. Documents of
other kinds pass through byte for byte. On bad input: one error on standard error naming the
document and field, a non-zero exit and nothing on standard output.

A LeaderWorkerSet annotated fusioninfer.io/take-over: "true" (with --take-over-lws: every one) is
taken over: replaced by one LeaderWorkerSet per replica and, when multi-node, a Volcano PodGroup.

Helm 3:  helm install NAME CHART --post-renderer fusion-postrender
Helm 4:  helm plugin install plugins/fusion-postrender   (once)
         helm install NAME CHART --post-renderer fusion-postrender
Either:  --post-renderer-args --take-over-lws

options:
  -h, --help       show this help message and exit
  --take-over-lws  take over every LeaderWorkerSet in the stream, annotated or not
"""


def run(argv: list[str] | None = None) -> int:
    """The post-renderer as a command; what main() returns."""
    take_over = False
    for arg in sys.argv[1:] if argv is None else argv:
        if arg in ("-h", "--help"):
            sys.stdout.write(HELP)
            return 0
        if arg != "--take-over-lws":
            print(f"{USAGE}\n{PROG}: error: unrecognized argument: {arg}", file=sys.stderr)
            return 2
        take_over = True
    from fusion_helm.pipeline import render

    try:
        output = render(read_input("-"), take_over)
    except (InputError, InvalidSpec) as error:
        return fail(PROG, error)
    sys.stdout.write(output)
    return 0


def main() -> NoReturn:
    """Run, then leave without tearing the interpreter down: its modules and the stream's objects are
    freed by the exit itself, a few milliseconds sooner, on every helm call."""
    status = run()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
