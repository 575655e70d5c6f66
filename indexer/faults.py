"""Named points where a crash test may kill the indexer (SIGKILL, no clean-up at all).

Set CTXSEARCH_KILL_AT=NAME (or NAME:N, the Nth time the point is reached) in the
environment of an indexer process; nothing happens when the variable is not set.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

KILL_POINTS = (
    "after-scan",
    "after-delete",
    "after-batch",
    "before-space-save",
    "mid-space-save",
    "before-publish",
    "after-publish",
)
_reached: Counter[str] = Counter()


def kill_point(name: str) -> None:
    """Kill this process here if the environment asks for it."""
    wanted = os.environ.get("CTXSEARCH_KILL_AT")
    if not wanted:
        return
    point, _, count = wanted.partition(":")
    if point != name:
        return
    _reached[name] += 1
    if _reached[name] >= int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)
