"""@record behaves as a frozen dataclass does, for what the package uses of one; the collector pause
restores the collector's state."""

from __future__ import annotations

import gc
from collections.abc import Mapping
from typing import ClassVar

import pytest

from fusion_helm.collector import paused
from fusion_helm.records import EMPTY, record


@record
class Point:
    x: int
    y: int = 0
    labels: Mapping[str, str] = EMPTY
    ORIGIN: ClassVar[str] = "origin"

    @property
    def norm(self) -> int:
        return abs(self.x) + abs(self.y)


def test_fields_defaults_and_positional_or_keyword_arguments() -> None:
    assert (Point(1).x, Point(1).y, Point(1).labels) == (1, 0, {})
    assert Point(1, 2) == Point(x=1, y=2) == Point(y=2, x=1)
    assert Point(3, -4).norm == 7
    assert Point.ORIGIN == "origin"
    assert repr(Point(1, 2)) == "Point(x=1, y=2, labels=mappingproxy({}))"


@record
class Pair:
    left: str
    right: str


def test_equality_and_hash_by_fields_and_class() -> None:
    assert Point(1) != Point(2)
    assert Point(1) != (1, 0, {})
    assert hash(Pair("a", "b")) == hash(Pair("a", "b")) and {Pair("a", "b"), Pair("a", "b")} == {Pair("a", "b")}
    with pytest.raises(TypeError):  # as a frozen dataclass's: a field that is not hashable
        hash(Point(1))


def test_immutable_and_strict_about_arguments() -> None:
    point = Point(1)
    with pytest.raises(AttributeError, match="immutable"):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing argument 'x'"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected or repeated argument 'z'"):
        Point(1, z=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected or repeated argument 'x'"):
        Point(1, x=3)  # type: ignore[misc]
    with pytest.raises(TypeError, match="takes 3 arguments, 4 given"):
        Point(1, 2, EMPTY, 4)  # type: ignore[call-arg]


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_pause_restores_what_it_found(enabled: bool) -> None:
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        with paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(ValueError), paused():
            raise ValueError
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
