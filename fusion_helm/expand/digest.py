"""Short content hashes of generated objects' inputs (a role's pod templates, a picker's config):
when they change, what carries them changes, and the pods restart."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _sha256() -> Callable[[bytes], Any]:
    """CPython's own SHA-256 (_sha256, _sha2 from 3.12) where it has one: hashlib loads OpenSSL, a
    start-up cost on every helm call."""
    for module in ("_sha256", "_sha2", "hashlib"):
        try:
            return importlib.import_module(module).sha256  # type: ignore[no-any-return]
        except ImportError:
            continue
    raise ImportError("no SHA-256")


_SHA256 = _sha256()


def short_hash(text: str) -> str:
    """The first 16 hex digits of TEXT's SHA-256."""
    digest: str = _SHA256(text.encode()).hexdigest()
    return digest[:16]
