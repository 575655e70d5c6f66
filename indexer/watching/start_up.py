"""The work a watch does once, beside its runs, so that the first edits find it done."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.errors import CtxsearchError
from indexer.watching.changes import LOOK_AGAIN_MS
from indexer.watching.state import WatchState

if TYPE_CHECKING:
    from indexer.runs.indexer import Indexer


class StartUp:
    """The model loaded (a catch-up run with nothing to encode never loads it; the load
    of an existing index's model begins with the watch, beside the catch-up run), then,
    once the catch-up is done (`caught_up`), the large files split ahead
    (`Indexer.warm_split_cache`). A run that needs the model waits only for the load in
    progress (a writer makes its encoders once); the splitting ahead gives way to every
    run, and is taken up again after it. A model that cannot load is told to
    `model_not_loaded` once (from the start-up's thread); each run that needs it fails
    and says why."""

    def __init__(
        self,
        indexer: Indexer,
        roots: list[Path],
        state: WatchState,
        model_not_loaded: Callable[[CtxsearchError], None],
    ) -> None:
        self.indexer, self.roots, self.state = indexer, roots, state
        self.model_not_loaded = model_not_loaded
        self.thread: threading.Thread | None = None
        self.caught_up = threading.Event()  # set once the first catch-up run is done

    def begin(self) -> None:
        """Start the work in the background (once: a later catch-up does not again)."""
        if self.thread is None and not self.state.stop_requested.is_set():
            self.thread = threading.Thread(target=self._work, name="watch-start-up", daemon=True)
            self.thread.start()

    @contextmanager
    def joined(self) -> Iterator[None]:
        """On the way out, wait for the work to give way (a model's load, once begun,
        ends first: as it did when the watch loaded it between runs)."""
        try:
            yield
        finally:
            self.state.stop_requested.set()
            if self.thread is not None:
                self.thread.join()

    def _work(self) -> None:
        from indexer.splitting.split_cache import GaveWay

        try:
            self.indexer.load_encoders()
        except CtxsearchError as error:
            self.model_not_loaded(error)
            return
        while not self.caught_up.wait(LOOK_AGAIN_MS / 1000):
            if self.state.stop_requested.is_set():
                return
        for root in self.roots:
            while not self.state.stop_requested.is_set():
                if not self.state.idle.wait(LOOK_AGAIN_MS / 1000):
                    continue  # a run is going on: after it
                try:
                    self.indexer.warm_split_cache(root, give_way=self.state.busy)
                except GaveWay:
                    continue
                except (CtxsearchError, OSError):  # the next run says what is wrong
                    return
                break
