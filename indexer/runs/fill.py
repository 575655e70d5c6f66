"""The fill: the contextual vectors a run left for after its publish, in published batches.

A run commits its documents, passages, lexical entries and static vectors first, in one
publish: from then on they are searchable by every side but the contextual one, which
costs nearly all of the encoding. The fill then takes the lowest passages still lacking
their contextual vector (`indexer.store.unfilled`), `fill_batch_chunks` at a time, and
publishes each batch's vectors as a change of its own: a reader sees the index grow a
batch at a time, and a fill stopped between two batches (a kill, Ctrl-C) leaves the
last one published; the next run of any kind resumes from there, encoding nothing that
was stored. A passage whose text and settings some stored passage has gets that one's
vector, copied (`indexer.store.content_keys`), and one repeated in a batch is encoded once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from indexer.errors import IndexLocked
from indexer.faults import kill_point
from indexer.runs.progress import Progress
from indexer.spaces import CONTEXTUAL
from indexer.store.content_keys import content_keys

if TYPE_CHECKING:
    from indexer.encoders.for_index import IndexEncoders
    from indexer.runs.progress import ProgressCallback
    from indexer.store.base import Change, Store
    from indexer.store.manifest import Manifest

EncodersFor = Callable[["Manifest"], "IndexEncoders"]
# What the model reads for a stored passage of an index, from its text and section trail.
ModelText = Callable[["Manifest"], Callable[[str, "str | None"], str]]

# One change for the whole fill when the writer fills within its runs (batch size 0).
_ALL_AT_ONCE = 2**62


def fill_contextual(
    store: Store,
    encoders_for: EncodersFor,
    model_text: ModelText,
    batch_size: int,
    precision: str,
    report: ProgressCallback,
) -> int:
    """Store the contextual vector of every passage of `store` that lacks one, `batch_size`
    at a time (0: all at once), each batch published atomically (the writer lock held):
    what `model_text(manifest)` makes of its text and trail, encoded by
    `encoders_for(manifest)` in `precision`, reported as `fill` progress. Returns how
    many passages were encoded. A fill that loses its writer lock (a PostgreSQL session
    ended) stops there: what it published stays, and the next run fills the rest."""
    manifest = store.manifest
    if manifest is None or CONTEXTUAL not in manifest.spaces or not manifest.unfilled:
        return 0
    total, done, encoded = None, 0, 0
    while True:
        try:
            with store.change() as change:
                if total is None:
                    total = change.unfilled_count()
                    report(Progress("fill", 0, total))
                within = _Within(report, done, total)
                batch = change.unfilled_chunks(batch_size or _ALL_AT_ONCE)
                encoded += _fill_next(change, batch, model_text, encoders_for, precision, within)
                left = change.manifest.unfilled
        except IndexLocked:  # lost (a PostgreSQL session ended): what it published stays
            return encoded
        done += len(batch)
        report(Progress("fill", done, total, chunks=done, encoded=done))
        if not left:
            return encoded
        kill_point("after-fill-batch")


def _fill_next(
    change: Change,
    batch: list[tuple[int, str, str | None]],
    model_text: ModelText,
    encoders_for: EncodersFor,
    precision: str,
    within: _Within,
) -> int:
    """Fill `batch`, the next unfilled chunks, in `change`; how many were encoded."""
    manifest = change.manifest
    if not batch:  # the passages left to fill were removed since: the fill is done
        empty = np.zeros((0, manifest.dim_of(CONTEXTUAL)), np.float32)
        change.fill_contextual(np.zeros(0, np.int64), empty)
        return 0
    read = model_text(manifest)
    texts = [read(text, trail) for _, text, trail in batch]
    return _fill_batch(change, batch, texts, encoders_for(manifest), precision, within.encoded)


class _Within:
    """Reports the passages encoded within a batch, as the encoder says it goes: a batch
    of long passages takes a while."""

    def __init__(self, report: ProgressCallback, done: int, total: int):
        self.report, self.stored, self.total = report, done, total
        self.done = done

    def encoded(self, count: int) -> None:
        self.done = min(self.done + count, self.total)
        self.report(Progress("fill", self.stored, self.total, self.stored, self.done))


def _fill_batch(
    change: Change,
    batch: list[tuple[int, str, str | None]],
    texts: list[str],
    encoders: IndexEncoders,
    precision: str,
    progress: Callable[[int], None],
) -> int:
    """Store the contextual vectors of `batch` (id, text, trail), whose model inputs are
    `texts`, in `change`: copied where a filled passage has the same content key, else
    encoded (each text once); how many were encoded."""
    manifest = change.manifest
    dim = manifest.dim_of(CONTEXTUAL)
    keys = content_keys(texts, manifest)
    copied = change.filled_vectors_for(keys)
    rows: dict[str, int] = {}
    unique: list[str] = []
    for key, text in zip(keys, texts, strict=True):
        if key not in copied and key not in rows:
            rows[key] = len(unique)
            unique.append(text)
    fresh = np.zeros((0, dim), np.float32)
    if unique:
        change.set_precision(precision)  # the manifest records what encoded the vectors
        fresh = encoders[CONTEXTUAL].encode(unique, progress=progress)
    matrix = np.empty((len(batch), dim), np.float32)
    for row, key in enumerate(keys):
        matrix[row] = fresh[rows[key]] if key in rows else copied[key]
    ids = np.asarray([chunk_id for chunk_id, _, _ in batch], np.int64)
    change.fill_contextual(ids, matrix)
    return len(unique)
