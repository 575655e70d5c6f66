"""The files that links followed outside their roots lead to: the file watcher does not
see them, so the watch looks at them after every batch and once a second, and a change
there brings a run of the root."""

from __future__ import annotations

import os
from pathlib import Path

from indexer.reading.sources import signed_inode
from indexer.runs.folders import IndexSummary

# What is looked at of a file to tell it changed (None: it cannot be looked at).
Status = tuple[int, int, int | None, int | None] | None


class FollowedTargets:
    """The files each root's followed links lead to, with what its last run saw of them."""

    def __init__(self) -> None:
        self.seen: dict[Path, dict[str, Status]] = {}

    def record(self, root: Path, summary: IndexSummary) -> None:
        """What the run of `root` read of each file its followed links lead to. A link
        that cannot be looked at by its path's text (a name that is not UTF-8) is left
        to the folder's watcher."""
        self.seen[root] = {
            link.path: (link.size, link.mtime_ns, link.ctime_ns, link.inode)
            for link in summary.followed_links
            if _status(link.path) is not None
        }

    def changed(self) -> list[Path]:
        """The roots one of whose followed links leads to a file that changed since."""
        return [
            root
            for root, links in self.seen.items()
            if any(_status(path) != seen for path, seen in links.items())
        ]


def _status(path: str) -> Status:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, signed_inode(status.st_ino))
