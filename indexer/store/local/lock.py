"""One writer per index: an advisory lock (flock) on the index's `write.lock` file.

The kernel drops an flock when its process dies, however it dies, so a lock left by a
killed indexer is never stale: the next writer simply gets it.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from indexer.errors import IndexLocked
from indexer.store.local.index_files import LOCK_FILE


class WriterLock:
    """The exclusive right to write one index directory."""

    def __init__(self, directory: Path):
        self.path = Path(directory) / LOCK_FILE
        self._descriptor: int | None = None

    def acquire(self, wait: bool = False, poll_seconds: float = 0.2) -> WriterLock:
        """Take the lock; if another process holds it, wait (`wait`) or raise `IndexLocked`."""
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    holder = _holder(self.path)
                    os.close(descriptor)
                    raise IndexLocked(
                        f"{self.path.parent}: another ctxsearch process{holder} is writing this "
                        "index; wait for it to finish, or pass --wait"
                    ) from None
                time.sleep(poll_seconds)
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()}\n".encode())
        self._descriptor = descriptor
        return self

    def release(self) -> None:
        """Give the lock up (closing the file releases the flock)."""
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


def _holder(path: Path) -> str:
    try:
        pid = path.read_text().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
