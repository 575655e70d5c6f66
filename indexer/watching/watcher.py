"""`Watcher`: a writer that keeps an index in sync with folders until it is stopped (see
the package's docstring); it tells a `WatchListener` what happens."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.errors import IndexLocked, InvalidIgnoreFile, InvalidPattern, SourceNotFound
from indexer.faults import kill_point
from indexer.store.backends import store_exists
from indexer.watching.changes import Batch, RelevantChanges, change_batches, holds_undecodable_name
from indexer.watching.link_targets import FollowedTargets
from indexer.watching.listener import WatchListener
from indexer.watching.roots import (
    index_folders,
    is_under,
    outermost,
    root_identity,
    watched_roots,
)
from indexer.watching.start_up import StartUp
from indexer.watching.state import WatchState

if TYPE_CHECKING:
    from indexer.runs.folders import IndexSummary
    from indexer.runs.indexer import Indexer

LOCK_RETRY_SECONDS = 1.0


class Watcher:
    """Keeps the index of `indexer` in sync with the folders and files `paths` while
    `run()` runs.

    Every folder is indexed once when the watch starts (what changed while nobody
    watched), then again whenever files under it are added, changed or deleted, through
    `Indexer.index_folder`; a file given is a root that is one file, indexed through
    `Indexer.index_file` when it is edited, replaced or deleted. `stop()` (from another
    thread, or a signal handler) ends the watch after the current run; an exception
    raised inside a run (a signal handler's) leaves the index as the last published run
    left it, and ends `run()`. A watcher runs once: stopped, it stays stopped. A path
    that is not there (`SourceNotFound`) is refused here, before anything is read (see
    `watched_roots`).
    """

    def __init__(
        self,
        indexer: Indexer,
        paths: Iterable[str | Path],
        debounce_ms: int = 500,
        listener: WatchListener | None = None,
    ) -> None:
        self.indexer = indexer
        self.roots, self.files = watched_roots(indexer.target, paths)
        self.debounce_ms = debounce_ms
        self.listener = listener or WatchListener()
        self.state = WatchState()
        self._index_folders = index_folders(indexer.target)
        self._targets = FollowedTargets()
        self._gone: set[Path] = set()
        self._nested: set[str] = set()  # roots of their own found inside the watched ones
        self._undecodable = False  # a name the file watcher cannot pass on was seen

    @property
    def in_run(self) -> bool:
        """Whether a run is going on."""
        return self.state.in_run

    @property
    def stopping(self) -> bool:
        """Whether a stop was asked for."""
        return self.state.stop_requested.is_set()

    def stop(self) -> None:
        """End the watch after the current run (at once if none is going on)."""
        self.state.stop_requested.set()

    def run(self) -> None:
        """Watch until `stop()`: a catch-up run of every folder once its watcher is
        armed, then a run of each folder whose files changed."""
        start_up = StartUp(self.indexer, self.roots, self.state, self.listener.model_not_loaded)
        with start_up.joined():
            if store_exists(self.indexer.target):  # a new index's first run loads the model
                start_up.begin()
            while not self.stopping:
                # Each folder's identity (None: no folder there) as looked at before its
                # watcher is armed, never after: while it is the same, the watcher watches
                # the folder there (or there is none to watch); once it differs, it may
                # watch a folder that is gone, or none where one is now.
                looked = {root: self._identity(root) for root in self.roots}
                kill_point("watch-look")
                present = [root for root in self.roots if looked[root] is not None]
                caught_up = False
                for changes in self._batches(present):
                    changed = [Path(path) for _, path in changes]
                    # gone, back, swapped, or deleted and made again, since the look (the
                    # first batch too: it may hold the old folder's deletion)
                    if any(
                        self._identity(root) != looked[root]
                        or (root in changed and root not in self.files)
                        for root in self.roots
                    ):
                        break  # watch the folders that are there now, then catch up
                    if not caught_up:
                        # The watcher is armed: catch up with all that changed before it
                        # was (at start, or while a folder was replaced); what changes from
                        # now on comes in the next batches, so nothing falls in between.
                        caught_up = True
                        self._run_roots(self.roots)
                        start_up.begin()
                        start_up.caught_up.set()
                        continue
                    due = [root for root in self.roots if any(is_under(p, root) for p in changed)]
                    self._run_roots(due + self._targets.changed())

    def _identity(self, root: Path) -> tuple[int, int] | None:
        return root_identity(root, root in self.files)

    def _batches(self, present: list[Path]) -> Iterator[Batch]:
        polling = self._undecodable and any(holds_undecodable_name(root) for root in present)
        relevant = RelevantChanges(self.roots, self._index_folders, self._nested)
        return change_batches(
            present,
            relevant,
            self.debounce_ms,
            self.state.stop_requested,
            polling,
            self._found_undecodable,
        )

    def _found_undecodable(self) -> None:
        if not self._undecodable:
            self._undecodable = True
            self.listener.polling()

    def _run_roots(self, due: list[Path]) -> None:
        for root in outermost(due):
            if not self.stopping:
                summary = self._run(root)
                if summary is not None:
                    self._targets.record(root, summary)

    def _run(self, root: Path) -> IndexSummary | None:
        """One incremental run over `root`, waiting while another writer runs; its summary
        (None: it did not run). A folder (or file) that is gone is indexed as empty: its
        files leave the index."""
        told_busy = False
        while True:
            try:
                with self.state.running():
                    if root in self.files:
                        summary = self.indexer.index_file(root, missing_ok=True)
                    else:
                        summary = self.indexer.index_folder(root, allow_empty=True, missing_ok=True)
            except IndexLocked:
                if not told_busy:
                    self.listener.writer_busy()
                    told_busy = True
                if self.state.stop_requested.wait(LOCK_RETRY_SECONDS):
                    return None
                continue
            except (SourceNotFound, InvalidIgnoreFile, InvalidPattern) as error:
                self.listener.not_indexed(root, error)  # a change may fix it: a new run
                return None
            self._tell(root, summary)
            return summary

    def _tell(self, root: Path, summary: IndexSummary) -> None:
        """What changed in the folders watched, told once (a folder gone or back, a root
        of its own inside one, a nested root forgotten), then the run."""
        if summary.missing and root not in self._gone:
            self._gone.add(root)
            self.listener.folder_gone(root, summary.removed)
        elif not summary.missing and root in self._gone:
            self._gone.discard(root)
            self.listener.folder_back(root)
        for nested in summary.nested_roots:
            if nested not in self._nested:
                self._nested.add(nested)
                self.listener.nested_root_found(root, nested)
        for forgotten in summary.forgotten_roots:
            self._nested.discard(forgotten)
            self.listener.nested_root_forgotten(root, forgotten)
        self.listener.run_done(root, summary)
