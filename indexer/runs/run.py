"""One write into an index, whatever it writes: what folder runs and record runs share.

A `Run` opens (or creates) the index with this process as its only writer and checks
what it writes into; chunks documents with the index's model; encodes and stores them
about `batch_chunks` chunks at a time into the run's change (in this process or on a Ray
cluster, `indexer.runs.encoding`), leaving the contextual vectors to the fill once that
change is published (`indexer.runs.fill`); reports its progress; and, once committed,
exports the model for torch-free queries. What changes is the caller's (`indexer.runs.folders`,
`indexer.runs.record_changes`). Each run has its own state: the `Indexer` that starts
it keeps only its settings and its encoders, so one writer serves any number of runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from indexer.config import token_memo_dir
from indexer.encoders.for_index import EncoderHolder, IndexEncoders
from indexer.faults import kill_point
from indexer.reading.sources import Document
from indexer.reading.text_layout import Layout
from indexer.runs.fill import fill_contextual
from indexer.runs.progress import Progress, ProgressCallback, no_report
from indexer.runs.reuse import BatchPlan, Reuse
from indexer.runs.write_settings import WriteSettings
from indexer.splitting.chunking import Chunk, chunk_document, warm_split
from indexer.splitting.split_cache import SplitCache
from indexer.splitting.token_memo import TokenMemo
from indexer.store.backends import check_can_create, open_store, store_exists
from indexer.store.base import Change, NewDocument, Store, Target
from indexer.store.manifest import Manifest

if TYPE_CHECKING:
    from indexer.encoders.loading import LoadedModel


# Texts this long have their token spans kept between processes (`TokenMemo`): a cold
# split of a 1.4M-character page tokenises for seconds, of a small file for milliseconds.
MEMO_CHARACTERS = 100_000


@dataclass(frozen=True)
class Pending:
    """A document read and chunked, to be encoded and stored; it replaces the stored
    document `replaces`, if given. `metadata` is a record's, None for a file's."""

    document: Document
    chunks: list[Chunk]
    replaces: int | None
    metadata: dict | None = None


@dataclass
class Stored:
    """What a run's encoding wrote: documents added and updated, their chunks, how many
    of those went through the model (`encoded`: the others' vectors were reused, see
    `indexer.runs.reuse`), and how many processes encoded them (1 here, the Ray actors
    on Ray, 0 if none was needed)."""

    added: int = 0
    updated: int = 0
    chunks: int = 0
    workers: int = 0
    encoded: int = 0


@dataclass
class RunCounts:
    """What a run has done so far, as its `index` progress reports say it."""

    files_read: int = 0
    files_total: int = 0
    bytes_read: int = 0
    bytes_total: int = 0
    chunks_known: int = 0
    encoded: int = 0
    stored: int = 0

    def progress(self) -> Progress:
        """The `index` progress event of these counts."""
        return Progress(
            "index",
            self.files_read,
            self.files_total,
            self.stored,
            min(self.encoded, self.chunks_known),
            self.chunks_known,
            self.bytes_read,
            self.bytes_total,
        )


class Run:
    """One run of a writer: `target`, `settings` and `encoders` are the writer's, the rest
    its own.

    `stored` says what encoding wrote; `manifest` is that of the index opened (None
    before `open`).
    """

    def __init__(
        self,
        target: Target,
        settings: WriteSettings,
        encoders: EncoderHolder,
        progress: ProgressCallback | None = None,
        split_cache: SplitCache | None = None,
    ):
        self.target = target
        self.settings = settings
        self.encoders = encoders
        # the writer's, so that a file split again after an edit is tokenised and cut
        # only where it changed (a run of its own without one)
        self.split_cache = split_cache or SplitCache()
        self.report: ProgressCallback = progress or no_report
        self.counts = RunCounts()
        self.stored = Stored()
        self.manifest: Manifest | None = None

    # -- opening -------------------------------------------------------------------------

    @contextmanager
    def open(self, wait: bool = False) -> Iterator[Store]:
        """The index, opened or created, with this process as its only writer; the model,
        pooling and static space given for it checked against those it has."""
        target = self.target
        new_manifest = None
        if not store_exists(target):
            # A model that cannot load, or settings it cannot work with, create nothing.
            new_manifest = self._new_manifest()
            check_can_create(target)
        store = open_store(target, create=True)
        try:
            with store.writer(wait):
                if store.manifest is None:
                    store.initialise(new_manifest or self._new_manifest())
                    self.encoders.claim(store.manifest)  # it has its index id now
                else:
                    self.settings.check_matches(store.manifest)
                self.manifest = store.manifest
                yield store
        finally:
            store.close()

    def _new_manifest(self) -> Manifest:
        model, pooling, static = self.settings.new_index_settings()
        encoders = self.encoders.for_new_index(model, pooling, static, self._model_loading)
        return self.settings.new_manifest(encoders)

    # -- reading -------------------------------------------------------------------------

    def encoders_for(self, manifest: Manifest) -> IndexEncoders:
        """The writer's encoders for the index of `manifest` (loaded or made if needed)."""
        return self.encoders.for_index(manifest, self._model_loading)

    def chunk(
        self, manifest: Manifest, text: str, path: str, layout: Layout | None = None
    ) -> list[Chunk]:
        """`text` in the index's passages (its sections, then token windows inside each),
        each with its lines, heading and section trail, found the way `path`'s type and
        the reader's `layout` say. The model loads on the first call that needs it (a run
        that only touches or moves files needs none)."""
        loaded = self.encoders_for(manifest).loaded
        tokens, overlap = manifest.chunk_tokens, manifest.chunk_overlap
        memo = _token_memo(loaded, text, path)
        return chunk_document(
            text, path, layout, loaded.token_spans, tokens, overlap, self.split_cache, memo
        )

    def warm(
        self,
        manifest: Manifest,
        text: str,
        path: str,
        layout: Layout | None,
        give_way: Callable[[], bool],
    ) -> None:
        """Split `text` as `chunk` would, only to fill the writer's split cache; it gives
        way to any other split, and when `give_way()` is true (`GaveWay` rises)."""
        loaded = self.encoders_for(manifest).loaded
        tokens, overlap = manifest.chunk_tokens, manifest.chunk_overlap
        memo = _token_memo(loaded, text, path)
        cache = self.split_cache
        warm_split(text, path, layout, loaded.token_spans, tokens, overlap, cache, give_way, memo)

    def expect(self, documents: int, size: int) -> None:
        """The run will read `documents` documents of `size` bytes in all."""
        self.counts.files_total, self.counts.bytes_total = documents, size

    def read(self, done: int, size: int, chunks: int = 0) -> None:
        """The `done`th document was read (`size` bytes), making `chunks` chunks."""
        counts = self.counts
        counts.chunks_known += chunks
        counts.bytes_read += size
        counts.files_read = done
        self.report(counts.progress())

    # -- writing -------------------------------------------------------------------------

    def encode_and_store(self, change: Change, documents: Iterable[Pending]) -> None:
        """Encode and store documents a batch of about `batch_chunks` chunks at a time.

        The backend gets the texts of each batch's chunks whose vectors the index lacks
        (`indexer.runs.reuse`) and gives back their vectors, batch by batch and in order;
        what is written, and when, is the same for every backend.
        """
        manifest = change.manifest
        # The contextual vectors are the fill's, after the publish (`indexer.runs.fill`).
        defers = self.settings.defers_contextual
        reuse = Reuse(defers)
        spaces = reuse.encoded_spaces(manifest)

        def batches() -> Iterator[tuple[tuple[list[Pending], BatchPlan], list[str]]]:
            size = self.settings.batch_chunks
            for number, batch in enumerate(_batches_by_chunks(documents, size)):
                if number == 0:  # the manifest records the precision of what was encoded
                    change.set_precision(self.settings.precision)
                texts = [chunk.encoded_text for item in batch for chunk in item.chunks]
                plan = reuse.plan(change, texts)
                yield (batch, plan), plan.texts

        backend = self.settings.encoding_backend(self.encoders_for, self._chunks_encoded, spaces)
        try:
            with closing(backend.encode(manifest, batches())) as encoded:
                for (batch, plan), vectors in encoded:
                    self._store_batch(change, batch, *reuse.vectors(change, plan, vectors))
                    reuse.stored(plan)
                    if not defers:  # else the fill counts what the model encodes
                        self.stored.encoded += len(plan.texts)
                    counts = self.counts
                    counts.stored = self.stored.chunks
                    counts.encoded = max(counts.encoded, self.stored.chunks)
                    self.report(counts.progress())
                    kill_point("after-batch")
        finally:
            self.stored.workers = backend.workers
            backend.close()

    def fill(self, store: Store) -> None:
        """Encode and store the contextual vectors the index lacks (this run's new
        passages', and those an interrupted run left), a published batch at a time."""
        settings = self.settings
        self.stored.encoded += fill_contextual(
            store,
            self.encoders_for,
            self._model_text,
            settings.fill_batch_chunks,
            settings.precision,
            self.report,
        )

    def _model_text(self, manifest: Manifest) -> Callable[[str, str | None], str]:
        """What the model reads for a stored passage (`indexer.splitting.model_input`),
        from the writer's split cache: the passages this run split are known there."""
        spans = self.encoders_for(manifest).loaded.token_spans

        def model_text(text: str, section: str | None) -> str:
            return self.split_cache.model_input(text, section, spans, manifest.chunk_tokens)

        return model_text

    def _chunks_encoded(self, count: int) -> None:
        """`count` more chunks went through the encoder (within a batch: not stored yet)."""
        self.counts.encoded += count
        self.report(self.counts.progress())

    def _store_batch(
        self,
        change: Change,
        batch: list[Pending],
        vectors: dict[str, np.ndarray],
        unfilled: np.ndarray | None,
    ) -> None:
        # An edited file keeps the rows of its unchanged passages; a record (whose
        # metadata may have changed too) is removed and added again.
        change.remove_documents(
            item.replaces
            for item in batch
            if item.replaces is not None and item.metadata is not None
        )
        new, offset = [], 0
        for item in batch:
            end = offset + len(item.chunks)
            own = {name: matrix[offset:end] for name, matrix in vectors.items()}
            left = None if unfilled is None else unfilled[offset:end]
            document = NewDocument(item.document, item.chunks, own, item.metadata, left)
            offset = end
            if item.replaces is None:
                self.stored.added += 1
                new.append(document)
            elif item.metadata is None:
                self.stored.updated += 1
                change.replace_document(item.replaces, document)
            else:
                self.stored.updated += 1
                new.append(document)
        change.add_documents(new)
        self.stored.chunks += offset

    # -- after the commit ----------------------------------------------------------------

    def export_query_model(self) -> str:
        """Export the loaded model for torch-free queries, once per model (a few seconds).

        A run of a writer that never loaded the model exports nothing, unless the export
        it finds in the cache is damaged: the model is loaded then, to make it again.
        Never raises: the run has committed, and a failed export costs only the fast path.
        """
        from indexer.encoders.for_index import loaded_model
        from indexer.encoders.model_cache import entry_state, sweep_staging
        from indexer.encoders.onnx import query_model_dir

        if self.encoders.loaded is not None:
            return _export_for_queries(self.encoders.loaded)
        manifest = self.manifest
        if manifest is None:
            return ""
        folder = query_model_dir(manifest.model_fingerprint)
        sweep_staging(folder.parent)
        if entry_state(folder).kind != "damaged":
            return ""
        from indexer.encoders.export import previous_failure

        failure = previous_failure(manifest.model_fingerprint)
        if failure is not None:
            return f"not possible here: {failure}"
        try:
            loaded = loaded_model(manifest.model, on_load=self._model_loading)
        except Exception as error:  # after the commit, a repair that cannot be is a note
            why = (str(error).strip().splitlines() or [type(error).__name__])[0]
            return f"the damaged ONNX export was not made again ({why})"
        if loaded.fingerprint != manifest.model_fingerprint:
            return f"the damaged ONNX export was not made again ({manifest.model} changed)"
        return _export_for_queries(loaded)

    def _model_loading(self, loaded: bool) -> None:
        self.report(Progress("load-model", int(loaded), 1))


def index_totals(store: Store) -> tuple[int, int]:
    """The documents and chunks the index holds now."""
    with store.snapshot() as snapshot:
        counts = snapshot.counts()
    return counts["documents"], counts["chunks"]


def _export_for_queries(loaded: LoadedModel) -> str:
    """`ready` once the model's ONNX export is in the model cache, else why it is not."""
    from indexer.encoders.hashed import is_hashed

    if is_hashed(loaded):  # queries of the test encoder never needed torch
        return "ready"
    from indexer.encoders.export import ExportFailed, export_query_model, previous_failure

    failure = previous_failure(loaded.fingerprint)
    if failure is not None:
        return f"not possible here: {failure}"
    try:
        export_query_model(loaded)
    except ExportFailed as error:
        return str(error)
    return "ready"


def _token_memo(loaded: LoadedModel, text: str, path: str) -> TokenMemo | None:
    """The memo of `path`'s token spans, for a text large enough to be worth one."""
    if len(text) < MEMO_CHARACTERS:
        return None
    return TokenMemo.of(token_memo_dir(), loaded.tokenizer_id, path)


def _batches_by_chunks(documents: Iterable[Pending], size: int) -> Iterator[list[Pending]]:
    """Group documents into batches of about `size` chunks (a document is never split)."""
    current: list[Pending] = []
    count = 0
    for item in documents:
        current.append(item)
        count += len(item.chunks)
        if count >= size:
            yield current
            current, count = [], 0
    if current:
        yield current
