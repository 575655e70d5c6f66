"""Looking at folders instead of watching them: what a watch does while a name the file
watcher cannot pass on (one that is not UTF-8) lies under a watched folder.

Each look walks the folders without following links and notes every entry: a file's
size, mtime, ctime and inode, a folder's inode, and a link's own as well as what it
leads to (a file as a file is noted, a folder by its inode only). Two looks differ
where an entry came, went or changed: that is a batch of changes, in watchfiles' terms.
A link to a folder is never walked into, so a link to itself, to a folder that holds
it or to any folder above cannot make the walk loop (watchfiles' own poller follows
links, meets such a loop and stops with an error), and what happens in the folder it
leads to (the index's own, say) brings no batch: the runs do not follow such links
either. Reads change nothing a look notes: only writes make batches.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

# How often the folders are looked at.
POLL_MS = 1_000

# A batch: the (kind of change, path) pairs seen (watchfiles' `Change`, a path's text).
Batch = set[tuple[object, str]]
# What a look notes of each path under the folders.
Look = dict[str, tuple]


def polled_batches(
    folders: list[Path],
    relevant: Callable[[object, str], bool],
    debounce_ms: int,
    longest_wait_ms: int,
    stop: threading.Event,
) -> Iterator[Batch]:
    """The batches of `relevant` changes under `folders`, looked at every `POLL_MS`: an
    empty batch at once (the first look is taken) and after each look that sees none;
    changes seen are looked at again every `debounce_ms` while more come (at most
    `longest_wait_ms`) and yielded together. Ends when `stop` is set."""
    last = look(folders)
    yield set()
    while not stop.wait(POLL_MS / 1000):
        now = look(folders)
        batch = _changes(last, now, relevant)
        last = now
        deadline = time.monotonic() + longest_wait_ms / 1000
        while batch and time.monotonic() < deadline and not stop.wait(debounce_ms / 1000):
            now = look(folders)
            more = _changes(last, now, relevant)
            last = now
            if not more:
                break
            batch |= more
        if stop.is_set():
            return
        yield batch


def look(folders: list[Path]) -> Look:
    """What is under `folders` now (see the module's docstring); what cannot be read
    (a folder gone, not listable) is left out."""
    seen: Look = {}
    waiting = [str(folder) for folder in folders]
    while waiting:
        try:
            entries = list(os.scandir(waiting.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                own = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.is_symlink():
                seen[entry.path] = (_status(own), _target(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                seen[entry.path] = ("folder", own.st_ino)
                waiting.append(entry.path)
            else:
                seen[entry.path] = _status(own)
    return seen


def _status(status: os.stat_result) -> tuple[int, int, int, int]:
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


def _target(link: str) -> tuple | None:
    """What the link leads to (None: nothing, or a loop)."""
    try:
        status = os.stat(link)
    except OSError:
        return None
    return ("folder", status.st_ino) if stat.S_ISDIR(status.st_mode) else _status(status)


def _changes(before: Look, after: Look, relevant: Callable[[object, str], bool]) -> Batch:
    from watchfiles import Change

    found = {(Change.deleted, path) for path in before.keys() - after.keys()}
    found |= {(Change.added, path) for path in after.keys() - before.keys()}
    found |= {
        (Change.modified, path)
        for path in before.keys() & after.keys()
        if before[path] != after[path]
    }
    return {(change, path) for change, path in found if relevant(change, path)}
