"""What a watch tells whoever runs it (the command line says it; an app may log it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from indexer.errors import CtxsearchError
    from indexer.runs.folders import IndexSummary


class WatchListener:
    """What a watch tells whoever runs it, as it happens; each method does nothing here
    (override those you need). All are called from the thread that runs the watch, but
    `model_not_loaded`, which comes from the watch's start-up thread."""

    def run_done(self, root: Path, summary: IndexSummary) -> None:
        """A run over `root` published `summary` (after the notes below that it brought)."""

    def folder_gone(self, root: Path, removed: int) -> None:
        """`root` is no longer there: its files (`removed` documents) left the index, and
        the watch looks for it until it is back."""

    def folder_back(self, root: Path) -> None:
        """`root`, gone before, is there again and watched again."""

    def nested_root_found(self, root: Path, nested: str) -> None:
        """`nested`, a root indexed on its own inside `root`, is watched with it."""

    def nested_root_forgotten(self, root: Path, forgotten: str) -> None:
        """The nested root `forgotten` was forgotten: its folder is gone, and what was in
        it is `root`'s now."""

    def writer_busy(self) -> None:
        """Another process writes the index: the run waits for it (said once a run)."""

    def not_indexed(self, root: Path, error: CtxsearchError) -> None:
        """A run over `root` could not be made: the folder cannot be read
        (`SourceNotFound`), or its rules are wrong (`InvalidIgnoreFile`,
        `InvalidPattern`) until a change fixes them. The watch goes on."""

    def polling(self) -> None:
        """A name that is not UTF-8 is under a watched folder: the folders are looked at
        every `polling.POLL_MS` instead of watched while one is there (said once)."""

    def model_not_loaded(self, error: CtxsearchError) -> None:
        """The index's model could not be loaded ahead; changes that need it are not
        indexed until it can be (each run says why)."""
