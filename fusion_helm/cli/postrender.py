"""``fusion-postrender``: the Helm post-renderer — a multi-document stream on stdin, expanded on stdout."""

from __future__ import annotations

import argparse
import sys

from fusion_helm.cli.io import InputError, fail, read_input
from fusion_helm.errors import InvalidSpec
from fusion_helm.pipeline import filters, render

PROG = "fusion-postrender"
DESCRIPTION = """\
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
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--take-over-lws", action="store_true",
                        help="take over every LeaderWorkerSet in the stream, annotated or not")
    args = parser.parse_args(argv)
    try:
        output = render(read_input("-"), filters(args.take_over_lws))
    except (InputError, InvalidSpec) as error:
        return fail(PROG, error)
    sys.stdout.write(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
