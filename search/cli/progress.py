"""Draw the library's progress reports as click progress bars on stderr."""

from __future__ import annotations

import sys
from typing import Any

import click

from indexer.pipeline import Progress

_LABELS = {"index": "Indexing files", "encode": "Encoding chunks"}


class ProgressBars:
    """One bar per stage, opened when the stage starts (its total known), closed at the end."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self._stage: str | None = None
        self._bar: Any = None
        self._done = 0

    def __call__(self, event: Progress) -> None:
        self.report(event.stage, event.done, event.total, event.chunks)

    def report(self, stage: str, done: int, total: int, chunks: int | None = None) -> None:
        """Show that `done` of `total` units of `stage` are finished (and chunks encoded)."""
        if not self.enabled:
            return
        if stage != self._stage:
            self.close()
            self._stage, self._done = stage, 0
            self._bar = click.progressbar(
                length=total,
                label=_LABELS.get(stage, stage),
                file=sys.stderr,
                show_pos=True,
                show_eta=True,
                item_show_func=lambda chunks: f"{chunks:,} chunks encoded" if chunks else None,
            )
            self._bar.__enter__()
        self._bar.update(done - self._done, chunks)
        self._done = done

    def close(self) -> None:
        """Finish the open bar, if any."""
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
