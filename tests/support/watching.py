"""`ctxsearch watch` as a real process whose output the test waits on, line by line.

Two reader threads copy the process's stdout and stderr into files (watch.out,
watch.err) and count the lines; `until(condition)` checks its condition, then again each
time the process says something (a run's JSON line after its commit, a note) or ends.
Nothing sleeps to give the watcher time: a check happens when there is news, and the
overall patience is only a safety net.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import ROOT

PATIENCE_SECONDS = 300.0  # a safety net only: the waits end when the news comes


class Watched:
    """A running `ctxsearch watch --json`, its output teed to files and counted."""

    def __init__(self, args: list[str], folder: Path, env: dict[str, str] | None = None):
        command = [sys.executable, "-m", "search", "watch", *args, "--json"]
        self.out, self.err = folder / "watch.out", folder / "watch.err"
        # The copies exist before anything reads them; each reader thread closes its own.
        copies = [open(path, "w") for path in (self.out, self.err)]  # noqa: SIM115
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        )  # fmt: skip
        self._news = threading.Condition()
        self._said = 0  # lines said so far, on either stream
        self._open = 2  # streams not yet at their end
        self._readers = [
            threading.Thread(target=self._tee, args=(stream, copy), daemon=True)
            for stream, copy in zip((self.process.stdout, self.process.stderr), copies, strict=True)
        ]
        for reader in self._readers:
            reader.start()

    def _tee(self, stream, copy) -> None:
        with copy:
            for line in stream:
                copy.write(line)
                copy.flush()
                with self._news:
                    self._said += 1
                    self._news.notify_all()
        with self._news:
            self._open -= 1
            self._news.notify_all()

    def stderr(self) -> str:
        """What the process has said on stderr so far."""
        return self.err.read_text()

    def runs(self) -> int:
        """How many runs have ended (one JSON line each on stdout)."""
        return len(self.out.read_text().splitlines())

    def until(self, condition: Callable[[], bool], what: str) -> None:
        """Return once `condition()` holds; it is checked now and after each line the
        process says. Fails if the process ends first or after PATIENCE_SECONDS."""
        deadline = time.monotonic() + PATIENCE_SECONDS
        while True:
            with self._news:
                said, ended = self._said, self._open == 0
            if ended:  # its output is all in: once it has exited, one last look
                self.process.wait(timeout=PATIENCE_SECONDS)
            if condition():
                return
            if ended:
                raise AssertionError(f"watch ended before {what}:\n{self.stderr()}")
            with self._news:
                news = self._news.wait_for(
                    lambda said=said: self._said > said or self._open == 0,
                    deadline - time.monotonic(),
                )
            if not news:
                raise AssertionError(f"never happened: {what}\n{self.stderr()}")

    def stop(self) -> None:
        """Kill the process if it still runs, and let the readers finish."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for reader in self._readers:
            reader.join()
