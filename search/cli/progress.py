"""Draw the library's progress reports as click progress bars on a terminal (stderr).

An indexing run shows `Loading the model …` while it loads, then one bar of chunks
encoded against the run's estimated total (see `search.cli.eta`), with the rate, the
time left and the files read, then one of the contextual vectors the fill encodes
(`indexer.runs.fill`: the passages are searchable by the other sides meanwhile). Other
stages (the lab's) get a plain bar of their units.
Nothing is drawn unless the stream is a terminal.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

import click

from indexer.runs.indexer import Progress
from search.cli.eta import clock, estimate

_LABELS = {"index": "Encoding chunks", "fill": "Contextual vectors"}


class ProgressBars:
    """One bar per stage, opened when the stage starts (its total known), closed at the end.

    `stream` is where to draw (stderr by default); nothing is drawn unless `enabled`
    and the stream is a terminal."""

    def __init__(self, enabled: bool, stream: IO[str] | None = None, unit: str = "files"):
        self.stream = stream if stream is not None else sys.stderr
        self.unit = unit  # what `index` progress counts: files, or records
        self.enabled = enabled and self.stream.isatty()
        self._stage: str | None = None
        self._bar: Any = None
        self._done = 0
        self._loading_since: float | None = None
        self._files_since = 0.0

    def __call__(self, event: Progress) -> None:
        if not self.enabled:
            return
        if event.stage == "load-model":
            if event.done < event.total:
                self._start_loading()
            else:
                self._finish_loading("done in")
        elif event.stage == "index":
            self._show_index(event)
        elif event.stage == "fill":  # passages encoded, ahead of those published
            self.report(event.stage, event.encoded, event.total, event.encoded)
        else:
            self.report(event.stage, event.done, event.total, event.chunks)

    def report(self, stage: str, done: int, total: int, chunks: int | None = None) -> None:
        """Show that `done` of `total` units of `stage` are finished (and chunks encoded)."""
        if not self.enabled:
            return
        if stage != self._stage:
            self._open(stage, total, show_eta=True)
        self._bar.update(done - self._done, chunks)
        self._done = done

    def _open(self, stage: str, total: int, show_eta: bool) -> None:
        self.close()
        self._stage, self._done = stage, 0
        item = _chunks_encoded if show_eta else _as_is
        self._bar = click.progressbar(
            length=max(total, 1),
            label=_LABELS.get(stage, stage),
            file=self.stream,
            show_pos=show_eta,
            show_eta=show_eta,
            item_show_func=item,
        )
        self._bar.__enter__()

    def _start_loading(self) -> None:
        self.close()
        self._stage = "load-model"
        self._loading_since = time.monotonic()
        self.stream.write("Loading the model … ")
        self.stream.flush()

    def _show_index(self, event: Progress) -> None:
        """The run's bar: chunks encoded of the estimated total, the rate and time left."""
        if self._stage != "index":
            self.close()
            self._files_since = time.monotonic()
            self._open("index", 1, show_eta=False)
        guess = estimate(event, time.monotonic() - self._files_since)
        parts = [f"{event.encoded:,}/{'' if guess.exact else '~'}{guess.total_chunks:,} chunks"]
        if guess.chunks_per_second is not None and guess.seconds_left is not None:
            parts.append(f"{guess.chunks_per_second:,.1f} chunks/s")
            parts.append(f"{clock(guess.seconds_left)} left")
        parts.append(f"{self.unit} {event.done:,}/{event.total:,}")
        self._bar.length = max(guess.total_chunks, 1)
        step = event.encoded - self._done
        self._done = event.encoded
        self._bar.current_item = " · ".join(parts)
        if step > 0:
            self._bar.update(step, self._bar.current_item)
        else:
            self._bar.render_progress()

    def _finish_loading(self, outcome: str) -> None:
        if self._loading_since is not None:
            seconds = time.monotonic() - self._loading_since
            self.stream.write(f"{outcome} {seconds:.1f}s\n")
            self.stream.flush()
            self._loading_since = None
        self._stage = None

    def close(self) -> None:
        """Finish the open bar (or the model's line: a load that did not finish), if any."""
        self._finish_loading("stopped after")
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
        self._stage = None


def _chunks_encoded(chunks: int | None) -> str | None:
    return f"{chunks:,} chunks encoded" if chunks else None


def _as_is(text: str | None) -> str | None:
    return text
