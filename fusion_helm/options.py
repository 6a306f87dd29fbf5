"""The post-render's options, one record for every transport, parsed here: fusion-postrender's flags
(by hand: argparse costs more to import than a small render), fusion-helm's (argparse, from the names
and help here) and fusion-krm's functionConfig. Standard library only: the post-renderer parses them
before it loads anything else."""

from __future__ import annotations

from fusion_helm.base.kinds import TAKE_OVER_LAYOUTS
from fusion_helm.errors import InvalidSpec, format_path, show
from fusion_helm.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TAKE_OVER_FLAG = "--take-over-lws"
TAKE_OVER_HELP = "take over every LeaderWorkerSet, annotated or not"
LAYOUT_FLAG = "--take-over-layout"
LAYOUT_HELP = ("the layout of a taken-over LeaderWorkerSet without the annotation fusioninfer.io/layout: replica "
               "(one LeaderWorkerSet per replica, the default) or role (the LeaderWorkerSet kept whole, its "
               "rollout and name kept)")
TAKE_OVER_KEY = TAKE_OVER_FLAG.removeprefix("--")
LAYOUT_KEY = LAYOUT_FLAG.removeprefix("--")
_BOOLEANS = {"true": True, "false": False, True: True, False: False}


@record
class Options:
    take_over_every_leader_worker_set: bool = False
    take_over_layout: str = TAKE_OVER_LAYOUTS[0]
    """What a taken-over LeaderWorkerSet without the layout annotation becomes."""


class UsageError(Exception):
    """A flag the command does not take, or a value it cannot."""


def from_flags(args: list[str]) -> Options:
    """The options ARGS give (each flag's value after ``=`` or as the next argument, as argparse takes
    them: helm passes each --post-renderer-args value as one argument); UsageError."""
    take_over, layout = False, TAKE_OVER_LAYOUTS[0]
    given = iter(args)
    for arg in given:
        if arg == TAKE_OVER_FLAG:
            take_over = True
        elif arg == LAYOUT_FLAG or arg.startswith(f"{LAYOUT_FLAG}="):
            value = arg.partition("=")[2] if "=" in arg else next(given, None)
            if value is None:
                raise UsageError(f"argument {LAYOUT_FLAG}: expected one argument")
            if value not in TAKE_OVER_LAYOUTS:
                choices = ", ".join(map(repr, TAKE_OVER_LAYOUTS))
                raise UsageError(f"argument {LAYOUT_FLAG}: invalid choice: {value!r} (choose from {choices})")
            layout = value
        else:
            raise UsageError(f"unrecognized argument: {arg}")
    return Options(take_over, layout)


def from_function_config(function_config: Any) -> Options:
    """The options a KRM function's functionConfig gives: a v1 ConfigMap whose data may set the flags'
    names without dashes; InvalidSpec naming the field."""
    if function_config is None:
        return Options()
    metadata = function_config.get("metadata") if isinstance(function_config, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    where = f"functionConfig ConfigMap {name}" if isinstance(name, str) else "functionConfig"
    if not isinstance(function_config, dict) or function_config.get("kind") != "ConfigMap" \
            or function_config.get("apiVersion") != "v1":
        raise InvalidSpec(where, "", f"must be a v1 ConfigMap whose data sets {TAKE_OVER_KEY} or {LAYOUT_KEY}")
    data = function_config.get("data") or {}
    if not isinstance(data, dict):
        raise InvalidSpec(where, "data", "must be a mapping")
    for key in data:
        if key not in (TAKE_OVER_KEY, LAYOUT_KEY):
            raise InvalidSpec(where, format_path(["data", key]) if isinstance(key, str) else "data",
                              f"unknown option; the options are {TAKE_OVER_KEY} and {LAYOUT_KEY}")
    take_over = data.get(TAKE_OVER_KEY, False)
    if not isinstance(take_over, str | bool) or take_over not in _BOOLEANS:
        raise InvalidSpec(where, f"data.{TAKE_OVER_KEY}", f'must be "true" or "false", got {show(take_over)}')
    layout = data.get(LAYOUT_KEY, TAKE_OVER_LAYOUTS[0])
    if layout not in TAKE_OVER_LAYOUTS:
        raise InvalidSpec(where, f"data.{LAYOUT_KEY}",
                          f"must be one of {', '.join(TAKE_OVER_LAYOUTS)}, got {show(layout)}")
    return Options(_BOOLEANS[take_over], layout)
