"""Waiting on another process's own state: the files it has open, read from /proc."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

PATIENCE_SECONDS = 300.0  # a safety net only: the wait ends when the file is open


def until_open(process: subprocess.Popen, path: Path) -> bool:
    """True once `process` has `path` (or a file inside the folder `path`) open; False if
    it ends first. A look at /proc every 50 ms: how soon it is seen, never what is seen."""
    fds = Path(f"/proc/{process.pid}/fd")
    wanted = str(path)
    look = threading.Event()  # never set: its wait is the pause between looks
    deadline = time.monotonic() + PATIENCE_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        try:
            targets = [os.readlink(fd) for fd in fds.iterdir()]
        except FileNotFoundError:  # an fd closed (or the process ended) while we looked
            targets = []
        if any(t == wanted or t.startswith(wanted + os.sep) for t in targets):
            return True
        look.wait(0.05)
    if process.poll() is None:
        raise AssertionError(f"the process never opened {path} in {PATIENCE_SECONDS}s")
    return False
