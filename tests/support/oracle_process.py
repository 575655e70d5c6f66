"""Run a `ctxsearch` command in this process and signal it at a chosen instant.

    python -m tests.support.oracle_process index FOLDER --index IX ...

`$ORACLE_SIGNAL` (JSON) says when, counting passes of the named points of
`indexer.faults` (any name, whether or not `CTXSEARCH_KILL_AT` knows it):
- `{"signal": "SIGINT", "point": "after-batch", "count": 2}`: at the second pass;
- `{"signal": "SIGINT", "point": "before-publish", "count": 1, "after": 3}`: at the
  third step after that pass, a step being a line of the file that called the point or
  the return of a call made from it; so an interruption lands between any two
  statements near the point (`after: 3` past `before-publish` is the instant the
  publishing commit has returned).

The signal is real (`os.kill` of this process), so a SIGINT runs every handler and
clean-up a Ctrl-C would, and a SIGKILL none. Without the variable the command runs as
it would from the shell. Nothing in the product knows of this.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from types import FrameType
from typing import Any


class SignalAt:
    """A trace function that sends `signum` to this process once, at the chosen instant."""

    def __init__(self, spec: dict[str, Any]):
        from indexer import faults

        self.signum = signal.Signals[spec["signal"]]
        self.point = spec["point"]
        self.count = int(spec.get("count", 1))
        self.after = int(spec.get("after", 0))
        self.point_code = faults.kill_point.__code__
        self.passes = 0
        self.steps = 0
        self.anchor: str | None = None  # the file that called the point, once passed
        self.fired = False

    def __call__(self, frame: FrameType, event: str, _arg: object):  # -> local tracer
        if self.fired:
            return None
        code = frame.f_code
        if self.anchor is None:
            if code is self.point_code and frame.f_locals.get("name") == self.point:
                self.passes += 1
                if self.passes == self.count:
                    self._anchor_at(frame.f_back)
            return None
        if code.co_filename == self.anchor:
            return self._step
        caller = frame.f_back
        if caller is not None and caller.f_code.co_filename == self.anchor:
            return self._return  # a call made from the file: its return is a step
        return None

    def _anchor_at(self, caller: FrameType | None) -> None:
        """Count steps from here on, in the file of the point's caller."""
        if self.after == 0 or caller is None:
            self._fire()
            return
        self.anchor = caller.f_code.co_filename
        caller.f_trace = self._step  # it runs already: trace its next lines too

    def _step(self, frame: FrameType, event: str, arg: object):  # -> local tracer
        if event == "line":
            self._count()
        elif event == "return":
            self._return(frame, event, arg)
        return None if self.fired else self._step

    def _return(self, _frame: FrameType, event: str, _arg: object):  # -> local tracer
        if event == "return":
            self._count()
        return None if self.fired else self._return

    def _count(self) -> None:
        if self.fired:
            return
        self.steps += 1
        if self.steps >= self.after:
            self._fire()

    def _fire(self) -> None:
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
