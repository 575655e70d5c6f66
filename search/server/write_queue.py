"""The writes of a writable server (`serve --writable`, `mcp --writable`) run one at a
time on a thread of their own.

A write waiting for the one before it holds no request worker: its coroutine awaits its
turn, so searches keep answering however many writes queue. A write first takes a
`place` in the queue, held until it is answered: at most `MAX_WAITING_WRITES` wait
behind the one running, and a write past them is refused at once (`WritesQueueFull`).
`serve` takes the place before it reads the request's body, so a refused write costs the
server no body; the MCP tools take it as they are called.

Cheap to import (asyncio and the thread pool load when a queue is made): the command
line's help names `MAX_WAITING_WRITES`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from indexer.errors import CtxsearchError

MAX_WAITING_WRITES = 16
_MAX_RETRY_AFTER = 60
Checked = TypeVar("Checked")
Result = TypeVar("Result")


class WritesQueueFull(CtxsearchError):
    """A write arrived while `MAX_WAITING_WRITES` writes wait already; `retry_after` is a
    guess of the seconds until there is room."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


class WriteQueue:
    """One writer thread, and the count of the writes holding a place (running, waiting,
    or on their way: a body being read, records being checked)."""

    def __init__(self, max_waiting: int = MAX_WAITING_WRITES):
        from concurrent.futures import ThreadPoolExecutor

        self.max_waiting = max_waiting
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctxsearch-writes")
        self._lock = threading.Lock()
        self._placed = 0
        self._seconds = 1.0  # a write's time, averaged over the last ones

    @contextmanager
    def place(self) -> Iterator[None]:
        """A place in the queue for one write, from now until the write is answered;
        `WritesQueueFull` at once when `max_waiting` writes wait already."""
        with self._lock:
            if self._placed > self.max_waiting:
                wait = max(1, min(_MAX_RETRY_AFTER, math.ceil(self._seconds * self._placed)))
                raise WritesQueueFull(
                    f"{self.max_waiting} writes wait already for the one running: send this "
                    f"one again once they are done (in about {wait} s)",
                    retry_after=wait,
                )
            self._placed += 1
        try:
            yield
        finally:
            with self._lock:
                self._placed -= 1

    async def run(self, check: Callable[[], Checked], write: Callable[[Checked], Result]) -> Result:
        """`write(check())` for a write holding a `place`: `check` (the input's checks,
        whose errors need not wait) on one of asyncio's threads, then `write` on the
        writer thread once the writes before it have run."""
        import asyncio

        checked = await asyncio.get_running_loop().run_in_executor(None, check)
        return await asyncio.wrap_future(self._thread.submit(self._timed, write, checked))

    def _timed(self, write: Callable[[Checked], Result], checked: Checked) -> Result:
        started = time.monotonic()
        try:
            return write(checked)
        finally:
            self._seconds = 0.7 * self._seconds + 0.3 * (time.monotonic() - started)
