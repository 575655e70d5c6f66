"""Named points where a test may kill, interrupt or pause the indexer, to prove crash safety.

CTXSEARCH_KILL_AT=NAME (or NAME:N, the Nth time the point is reached) makes the process
SIGKILL itself there: no clean-up of any kind runs. CTXSEARCH_SIGINT_AT=NAME (or NAME:N)
sends the process a SIGINT there instead, as a Ctrl-C landing at that instant would: the
KeyboardInterrupt rises from the next statement, and every clean-up on the way runs.
CTXSEARCH_PAUSE_AT=NAME:SECONDS sleeps at every pass (saying so on stderr), so that tests
can act while a run waits there. CTXSEARCH_HOLD_AT=NAME:FIFO (or NAME:N:FIFO) stops at
the first pass (the Nth), saying so on stderr, until a test opens the named pipe FIFO for
writing and closes it: a wait that ends on an event, not after a guessed time. Nothing
happens when the variables are not set.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections import Counter

from indexer import config

KILL_POINTS = (
    "after-scan",
    "after-delete",
    "after-batch",
    "after-fill-batch",
    "before-space-save",
    "mid-delta-save",
    "mid-space-save",
    "before-publish",
    "after-commit",
    "after-publish",
    "mid-sweep",
)
# The points a publish of the embedded store passes, in order (from its first space save):
# `mid-delta-save` when a space gets a delta segment, `mid-space-save` when it is merged
# into a new base (`CTXSEARCH_MAX_DELTAS=0` merges at every run).
PUBLISH_POINTS = (
    "before-space-save",
    "mid-delta-save",
    "mid-space-save",
    "before-publish",
    "after-commit",
    "after-publish",
    "mid-sweep",
)
# Points inside a Ray encoding worker (a process of the cluster, not the indexer).
WORKER_POINTS = ("worker-batch",)
# Points of a writer's start-up work beside its runs: before each large file `watch` splits ahead.
WARM_POINTS = ("warm-split",)
# Points in a searching process: a pass of query encodings (`search.batching`).
SEARCH_POINTS = ("query-encode",)
# Points in the ONNX export of the query model (`indexer.encoders.export`), after a run.
EXPORT_POINTS = ("mid-export",)
# Points of `ctxsearch watch`: once its stop signals are in place, before it opens the
# index; each time it has looked at its folders, before it arms a file watcher on those
# that are there.
WATCH_POINTS = ("watch-start", "watch-look")
_SIGNALS = ((config.KILL_AT, signal.SIGKILL), (config.SIGINT_AT, signal.SIGINT))
_reached: Counter[tuple[str, str]] = Counter()


def kill_point(name: str) -> None:
    """Kill, interrupt or pause this process here if the environment asks for it."""
    pause = config.read(config.PAUSE_AT)
    if pause:
        point, _, seconds = pause.partition(":")
        if point == name:
            print(f"ctxsearch: paused at {name}", file=sys.stderr, flush=True)
            time.sleep(float(seconds or 1))
    hold = config.read(config.HOLD_AT)
    if hold:
        point, count, fifo = _hold_parts(hold)
        if point == name:
            _reached[config.HOLD_AT.name, name] += 1
            if _reached[config.HOLD_AT.name, name] == count:
                print(f"ctxsearch: held at {name}", file=sys.stderr, flush=True)
                with open(fifo, "rb") as gate:  # blocks until a writer opens it
                    gate.read()  # and until it closes
    for variable, signum in _SIGNALS:
        wanted = config.read(variable)
        if not wanted:
            continue
        point, _, count = wanted.partition(":")
        if point != name:
            continue
        _reached[variable.name, name] += 1
        if _reached[variable.name, name] == int(count or 1):
            os.kill(os.getpid(), signum)


def _hold_parts(hold: str) -> tuple[str, int, str]:
    """The point, the pass and the pipe of a `NAME:FIFO` or `NAME:N:FIFO` hold."""
    point, _, rest = hold.partition(":")
    count, colon, fifo = rest.partition(":")
    if colon and count.isdigit():
        return point, int(count), fifo
    return point, 1, rest
