"""What a write reports while it runs: `Progress` events, through a callback."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """A progress report: `done` of `total` units of a stage.

    Stages, in order: `load-model` (0 of 1 as the model starts loading, 1 of 1 once
    loaded; only when the run needs the model), then `index` (`done` of `total` files
    read and chunked). The chunk counts of `index`: `chunks` encoded and stored,
    `encoded` through the encoder (ahead of `chunks` within a batch, so a large file
    advances as it is encoded; a Ray run reports a batch at a time), `chunks_known` made
    by chunking the files read so far (it grows while files are read), from `bytes_read`
    of the `bytes_total` bytes of the files to read.
    """

    stage: str
    done: int
    total: int
    chunks: int = 0
    encoded: int = 0
    chunks_known: int = 0
    bytes_read: int = 0
    bytes_total: int = 0


ProgressCallback = Callable[[Progress], None]


def no_report(_event: Progress) -> None:
    """A progress callback that hears nothing."""
