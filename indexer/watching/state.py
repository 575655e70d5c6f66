"""Whether a watch was asked to stop, and whether one of its runs is going on.

The watch's loop, its start-up work and whoever stops it (another thread, a signal
handler) share one `WatchState`: a stop asked for ends the watch after the current run,
and the start-up work gives way while a run goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class WatchState:
    """`stop_requested` is set to end the watch; `in_run` is true, and `idle` clear,
    while a run is going on."""

    def __init__(self) -> None:
        self.stop_requested = threading.Event()
        self.in_run = False
        self.idle = threading.Event()
        self.idle.set()

    @contextmanager
    def running(self) -> Iterator[None]:
        """Marks a run going on for as long as the block lasts."""
        self.in_run = True
        self.idle.clear()
        try:
            yield
        finally:
            self.in_run = False
            self.idle.set()

    def busy(self) -> bool:
        """Whether a run is going on or a stop was asked for: start-up work gives way."""
        return self.in_run or self.stop_requested.is_set()
