"""Immutable records with named, typed fields: what ``@dataclass(frozen=True)`` gives, for the
post-renderer's start-up budget. Importing dataclasses brings inspect, ast and dis, and each class
compiles its own methods; a post-renderer starts on every helm call. Type checkers read ``@record``
as a frozen dataclass (PEP 681).

    @record
    class Point:
        x: int
        y: int = 0
        label: Mapping[str, str] = EMPTY    # defaults are shared: never mutate a record's fields
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import MappingProxyType
    from typing import Any, TypeVar, dataclass_transform

    T = TypeVar("T")
else:
    def dataclass_transform(**_: object) -> Callable[[T], T]:
        return lambda decorator: decorator

_MAPPING_PROXY = type(type.__dict__)
"""types.MappingProxyType, without importing types (a post-renderer's start-up reads this module)."""
EMPTY: MappingProxyType[str, Any] = _MAPPING_PROXY({})
"""A default for a mapping field."""


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    """Make CLS a record of the fields it annotates (ClassVar annotations aside), in that order."""
    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - inspect costs what records save
    fields = tuple(name for name, annotation in annotations.items()
                   if not str(annotation).startswith(("ClassVar", "typing.ClassVar")))
    defaults = {name: cls.__dict__[name] for name in fields if name in cls.__dict__}
    known = frozenset(fields)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(fields):
            raise TypeError(f"{cls.__name__}() takes {len(fields)} arguments, {len(args)} given")
        values = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name not in known or name in values:
                raise TypeError(f"{cls.__name__}() got an unexpected or repeated argument {name!r}")
            values[name] = value
        for name in fields:
            if name not in values:
                if name not in defaults:
                    raise TypeError(f"{cls.__name__}() missing argument {name!r}")
                values[name] = defaults[name]
            object.__setattr__(self, name, values[name])

    def __setattr__(self: Any, name: str, value: Any) -> None:
        raise AttributeError(f"{cls.__name__} is immutable: cannot set {name!r}")

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in fields)

    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, name) for name in fields))

    def __repr__(self: Any) -> str:
        return f"{cls.__name__}({', '.join(f'{name}={getattr(self, name)!r}' for name in fields)})"

    for method in (__init__, __setattr__, __eq__, __hash__, __repr__):
        setattr(cls, method.__name__, method)
    return cls
