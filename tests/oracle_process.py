"""Run a `ctxsearch` command in this process and signal it at a chosen instant.

    python -m tests.oracle_process index FOLDER --index IX ...

`$ORACLE_SIGNAL` (JSON) says when:
- `{"signal": "SIGINT", "point": "after-batch", "count": 1}`: on the count-th pass of a
  named point of `indexer.faults` (any name, whether or not `CTXSEARCH_KILL_AT` knows it);
- `{"signal": "SIGKILL", "line": 40, "files": ["indexer/store/local/store.py"],
  "function": "_publishing"}`: on the 40th line executed in those files (in functions of
  that name, if given), so an interruption can land between any two statements (a
  Ctrl-C right after a commit, say).

The signal is real (`os.kill` of this process), so a SIGINT runs every handler and
clean-up a Ctrl-C would, and a SIGKILL none. Without the variable the command runs as
it would from the shell. Nothing in the product knows of this.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class SignalAt:
    """A trace function that sends `signum` to this process once, at the chosen instant."""

    def __init__(self, spec: dict[str, Any]):
        from indexer import faults

        self.signum = signal.Signals[spec["signal"]]
        self.point = spec.get("point")
        self.count = int(spec.get("count", 1))
        self.line = int(spec.get("line", 0))
        self.files = {str(ROOT / name) for name in spec.get("files", ())}
        self.function = spec.get("function")
        self.point_code = faults.kill_point.__code__
        self.seen = 0
        self.fired = False

    def __call__(self, frame: FrameType, event: str, _arg: object):  # -> local tracer
        if self.fired:
            return None
        code = frame.f_code
        if self.point is not None:
            if code is self.point_code and frame.f_locals.get("name") == self.point:
                self._count()
            return None
        if code.co_filename in self.files and self.function in (None, code.co_name):
            return self._line
        return None

    def _line(self, _frame: FrameType, event: str, _arg: object):  # -> local tracer
        if event == "line" and not self.fired:
            self._count()
        return self._line if not self.fired else None

    def _count(self) -> None:
        self.seen += 1
        if self.seen >= (self.count if self.point is not None else self.line):
            self.fired = True
            sys.settrace(None)
            os.kill(os.getpid(), self.signum)


def main() -> None:
    """Install the signal's trace (if asked for), then run the command line."""
    spec = os.environ.get("ORACLE_SIGNAL")
    if spec:
        sys.settrace(SignalAt(json.loads(spec)))
    from search.cli.main import cli

    cli(args=sys.argv[1:], prog_name="ctxsearch")


if __name__ == "__main__":
    main()
