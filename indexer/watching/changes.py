"""Which file events can change the index, and the batches they come in.

`watchfiles` groups the events until the folders have been quiet for `debounce` ms (a
burst that never goes quiet is still yielded every `LONGEST_WAIT_MS`), and yields an
empty batch every `LOOK_AGAIN_MS` without any, so that the watch can look at its folders
while nothing happens. Folders looked at instead of watched (`indexer.watching.polling`)
come in batches alike.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

from indexer.reading.sources import IGNORE_FILE, SKIPPED_FOLDERS, is_indexable
from indexer.watching.polling import Batch, polled_batches
from indexer.watching.roots import is_under, is_utf8

# A burst that never goes quiet (a long copy, a build) is still indexed this often.
LONGEST_WAIT_MS = 10_000
# How often, while nothing happens, a folder that is gone or was swapped is looked for.
LOOK_AGAIN_MS = 1_000


class RelevantChanges:
    """Which file events can change the index: an indexable file, a folder (or something
    deleted, which may have been one), or a root's ignore file; never a hidden or
    skipped path, nor the index's own files when the index lies inside a watched folder
    (`index_folders`: the index's folder as given and with its links resolved).
    Paths count from the deepest root that holds them: a watched folder, or a root of
    its own inside one (`nested`, the paths the runs found so far, read at each event),
    which may itself be hidden (`~/notes/.journal`)."""

    def __init__(
        self, roots: list[Path], index_folders: Collection[Path], nested: Collection[str] = ()
    ) -> None:
        self.roots = roots
        self.index_folders = index_folders
        self.nested = nested

    def __call__(self, change: object, raw_path: str) -> bool:
        from watchfiles import Change

        path = Path(raw_path)
        if any(is_under(path, folder) for folder in self.index_folders):
            return False
        if not any(is_under(path, root) for root in self.roots):
            return False
        inside = [Path(root) for root in self.nested]
        holders = [root for root in [*self.roots, *inside] if is_under(path, root)]
        root = max(holders, key=lambda holder: len(holder.parts))
        if path.name == IGNORE_FILE and path.parent == root:
            return True
        parts = path.relative_to(root).parts
        if any(part.startswith(".") or part in SKIPPED_FOLDERS for part in parts):
            return False
        return is_indexable(path) or change == Change.deleted or path.is_dir()


def change_batches(
    present: list[Path],
    relevant: RelevantChanges,
    debounce: int,
    stop: threading.Event,
    polling: bool,
    undecodable: Callable[[], None],
) -> Iterator[Batch]:
    """The batches of changes under the folders that are there (looked at instead of
    watched, with `polling`: `indexer.watching.polling`), and an empty batch each
    `LOOK_AGAIN_MS` without any, until `stop` is set. When the watcher stops at a name
    that is not UTF-8, `undecodable()` is called and the batches end: the caller arms a
    new watcher and catches up."""
    import watchfiles

    if not present:  # every folder is gone: look for them again now and then
        yield set()
        while not stop.wait(LOOK_AGAIN_MS / 1000):
            yield set()
        return
    if polling:
        yield from polled_batches(present, relevant, debounce, LONGEST_WAIT_MS, stop)
        return
    try:
        yield from watchfiles.watch(
            *present,
            watch_filter=relevant,
            step=debounce,
            debounce=max(LONGEST_WAIT_MS, debounce),
            stop_event=stop,
            rust_timeout=LOOK_AGAIN_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
            ignore_permission_denied=True,
        )
    except FileNotFoundError:  # a folder went between looking at it and watching it
        yield set()
    except RuntimeError as error:  # watchfiles' own, e.g. a name that is not UTF-8
        if "decode path" not in str(error):
            raise
        undecodable()


def holds_undecodable_name(folder: Path) -> bool:
    """Whether any name under `folder`, hidden or skipped ones too (the watcher sees
    them all), is not UTF-8."""
    for _parent, folders, files in os.walk(os.fsencode(folder)):
        if not all(is_utf8(name) for name in (*folders, *files)):
            return True
    return False
