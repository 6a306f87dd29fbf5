"""The cycle collector, paused while a stream is rendered or a service expanded: both build a great
many objects and no reference cycles, and every collection would walk each object built so far — a
third of the time of a large render."""

from __future__ import annotations

import gc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType


class paused:
    """Collection stops inside the block, and resumes after it if it ran before."""

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._was_enabled:
            gc.enable()
