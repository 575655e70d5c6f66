"""The writes of `serve --writable` run one at a time on a thread of their own.

A write waiting for the one before it holds no request worker: the request's coroutine
awaits its turn, so searches and `/health` keep answering however many writes queue.
At most `MAX_WAITING_WRITES` wait behind the one running; a write past them is refused
at once (`WritesQueueFull`, a 503 with `Retry-After`) before its body is parsed.

Cheap to import (asyncio and the thread pool load when a queue is made): the command
line's help names `MAX_WAITING_WRITES`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from indexer.errors import CtxsearchError

MAX_WAITING_WRITES = 16
_MAX_RETRY_AFTER = 60
Checked = TypeVar("Checked")
Result = TypeVar("Result")


class WritesQueueFull(CtxsearchError):
    """A write arrived while `MAX_WAITING_WRITES` writes wait already."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


class WriteQueue:
    """One writer thread, and the count of the writes admitted to it (running or waiting)."""

    def __init__(self, max_waiting: int = MAX_WAITING_WRITES):
        from concurrent.futures import ThreadPoolExecutor

        self.max_waiting = max_waiting
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctxsearch-writes")
        self._lock = threading.Lock()
        self._admitted = 0
        self._seconds = 1.0  # a write's time, averaged over the last ones

    async def run(self, check: Callable[[], Checked], write: Callable[[Checked], Result]) -> Result:
        """`write(check())`: refused at once when the queue is full; `check` (the input's
        checks, whose errors need not wait) on one of asyncio's threads, then `write` on
        the writer thread once the writes admitted before it have run."""
        import asyncio

        self._admit()
        try:
            checked = await asyncio.get_running_loop().run_in_executor(None, check)
            future = self._thread.submit(self._timed, write, checked)
        except BaseException:
            self._leave()
            raise
        future.add_done_callback(lambda _done: self._leave())  # run, failed or cancelled
        return await asyncio.wrap_future(future)

    def _admit(self) -> None:
        with self._lock:
            if self._admitted > self.max_waiting:
                wait = math.ceil(self._seconds * self._admitted)
                raise WritesQueueFull(
                    f"{self.max_waiting} writes wait already for the one running: send this "
                    "one again once they are done (Retry-After gives a guess in seconds)",
                    retry_after=max(1, min(_MAX_RETRY_AFTER, wait)),
                )
            self._admitted += 1

    def _leave(self) -> None:
        with self._lock:
            self._admitted -= 1

    def _timed(self, write: Callable[[Checked], Result], checked: Checked) -> Result:
        started = time.monotonic()
        try:
            return write(checked)
        finally:
            self._seconds = 0.7 * self._seconds + 0.3 * (time.monotonic() - started)
