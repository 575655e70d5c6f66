"""Index a folder: diff it against the store, encode only what changed, publish at once.

For each run:
1. walk the folder and compare each file's size and mtime with the store;
2. delete the documents whose files are gone (the store drops them from every space);
3. stream the files that may have changed: read and chunk one file at a time (a file
   whose hash is unchanged only gets its new mtime; a file that fails is reported and
   counted, its old version kept), and encode and store about `batch_chunks` chunks at a
   time into the run's change; the encoding runs in this process, or on a Ray cluster
   (`ray=`, see `indexer.encoding`), and nothing else changes with it;
4. publish everything at once (see `Store.change`), or nothing if nothing changed.

The index is any `Store` (`indexer.store.base`): a folder, or a PostgreSQL URL.
"""

from __future__ import annotations

import stat
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.chunking import Chunk, chunk_text
from indexer.content import why_not_prose
from indexer.encoder_key import EncoderKey, settings_text
from indexer.encoders.choices import DEFAULT_STATIC, static_settings
from indexer.encoders.precision import resolve_precision
from indexer.encoding import EncodingBackend, LocalEncoding
from indexer.errors import InvalidSettings, SourceNotFound, UnreadableFile
from indexer.faults import kill_point
from indexer.layout import locate_chunks
from indexer.moves import MoveKey, move_key
from indexer.nested_roots import RunRoot, nested_roots, owner
from indexer.rules import RootRules, merged
from indexer.settings import BATCH_CHUNKS, check_settings
from indexer.sources import Document, SourceFile, path_text, read_document, walk_folder
from indexer.store.backends import check_can_create, normalise_target, open_store, store_exists
from indexer.store.base import Change, NewDocument, Store, StoredDocument, Target
from indexer.store.index_types import DEFAULT_INDEX_TYPE
from indexer.store.manifest import Manifest
from indexer.version import __version__

if TYPE_CHECKING:
    from indexer.record_runs import RecordSummary

DEFAULT_POOLING = "mean"
DEFAULT_OVERLAP = 32
# A file with this much extracted text is indexed, but named in the run summary: one
# 700 KB release-notes file made over half of a documentation index's chunks.
LARGE_TEXT_CHARACTERS = 250_000


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


@dataclass(frozen=True)
class FileFailure:
    """A file that could not be indexed, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class MovedFile:
    """A document found under a new path with the same content: kept, not re-encoded."""

    old_path: str
    path: str


@dataclass(frozen=True)
class LargeFile:
    """A file indexed this run whose text is over `LARGE_TEXT_CHARACTERS`."""

    path: str
    characters: int
    chunks: int


@dataclass
class IndexSummary:
    """What one indexing run did.

    `failed`/`failures`: files (and folders) that could not be read; an older indexed
    version is kept. `skipped`/`skipped_files`: files read but not indexed, with why
    (text that is not language, such as a base64 blob). `workers`: how many processes
    encoded this run's chunks (1 in this process, the Ray actors with `ray=`; 0 when
    nothing needed encoding). `query_export`: how queries of this index can skip torch:
    `ready` (the model's ONNX export, made once per model, is in the model cache), the
    reason it could not be made, or "" when this run did not load the model.
    """

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    failed: int = 0
    chunks: int = 0
    total_documents: int = 0
    total_chunks: int = 0
    seconds: float = 0.0
    failures: list[FileFailure] = field(default_factory=list)
    touched: int = 0  # unchanged content, new mtime recorded
    skipped: int = 0
    skipped_files: list[FileFailure] = field(default_factory=list)
    workers: int = 0
    query_export: str = ""
    # the --exclude/--include rules this run used (remembered for the folder)
    rules: dict = field(default_factory=dict)
    # files moved or renamed (same content): their chunks and vectors were kept
    moved: int = 0
    moved_files: list[MovedFile] = field(default_factory=list)
    # files encoded this run with over LARGE_TEXT_CHARACTERS of text (exclude them if
    # they swamp the results)
    large_files: list[LargeFile] = field(default_factory=list)
    # roots indexed on their own under this folder, brought up to date with their own
    # rules; and those whose folders are gone, forgotten (their files are this folder's)
    nested_roots: list[str] = field(default_factory=list)
    forgotten_roots: list[str] = field(default_factory=list)
    # the folder was not there (`missing_ok`): taken as empty, its documents removed
    missing: bool = False

    def changed_anything(self) -> bool:
        """Whether the run changed a document (added, updated, moved, or a new mtime)."""
        return bool(self.added or self.updated or self.touched or self.moved)

    def to_dict(self) -> dict:
        """The summary as plain JSON-ready values."""
        return asdict(self)


@dataclass(frozen=True)
class _Pending:
    document: Document
    chunks: list[Chunk]
    replaces: int | None
    metadata: dict | None = None  # a record's (see `indexer.record_runs`); None for a file


class Indexer:
    """Builds and updates an index from folders of documents.

    `index` is a folder (the embedded SQLite + FAISS store) or a `postgresql+psycopg://`
    URL. `model`, `pooling` and `static` (what the static space holds: `token`,
    `model2vec` or `glove`) default to those of an existing index (or all-MiniLM-L6-v2,
    mean pooling and the token table for a new one); giving different ones for an
    existing index raises `ModelMismatch`.

    `ray` encodes on a Ray cluster instead of in this process: `"auto"` (the cluster in
    `$RAY_ADDRESS` or started on this machine, else a new local one) or a Ray address;
    `ray_workers` encoding actors (default: the cluster's CPUs / `ray_threads`) with
    `ray_threads` torch threads each. Needs `pip install 'ctxsearch[ray]'`.

    `precision` is what the contextual encoder computes in: `fp32`, `bf16`, or `auto`
    (the default: bf16 where the CPU has it natively, see `indexer.encoders.precision`);
    the manifest records the one chunks were last encoded in.
    """

    def __init__(
        self,
        index: Target,
        model: str | None = None,
        pooling: str | None = None,
        chunk_overlap: int = DEFAULT_OVERLAP,
        batch_chunks: int = BATCH_CHUNKS,
        index_type: str | None = None,
        static: str | None = None,
        ray: str | None = None,
        ray_workers: int | None = None,
        ray_threads: int = 1,
        precision: str | None = None,
    ):
        check_settings(pooling, chunk_overlap, batch_chunks, index_type, static)
        # fp32 or bf16, on this machine (`auto`, the default, is bf16 where it is native)
        self.precision = resolve_precision(precision)
        if ray is not None:
            from indexer.ray_encoding import RayEncoding

            # Checked now (Ray installed, sane numbers), before anything is read or written.
            RayEncoding(ray, ray_workers, ray_threads)
        self.ray = ray
        self.ray_workers = ray_workers
        self.ray_threads = ray_threads
        self.target = normalise_target(index)
        self.model_name = model
        self.pooling = pooling
        self.chunk_overlap = chunk_overlap
        self.batch_chunks = batch_chunks
        self.index_type = index_type
        self.static = static
        # The loaded model and one encoder per space, and what they were made for: checked
        # against the manifest of the index at every use (see `indexer.encoder_key`).
        self._encoders: dict | None = None
        self._encoders_made_for: EncoderKey | None = None
        self._run_manifest: Manifest | None = None  # the manifest of the index last written
        self._report: ProgressCallback = _no_report
        self._counts = _RunCounts()  # this run's progress, for the reports

    def index_folder(
        self,
        folder: str | Path,
        progress: ProgressCallback | None = None,
        wait: bool = False,
        exclude: list[str] | tuple[str, ...] | None = None,
        include: list[str] | tuple[str, ...] | None = None,
        default_excludes: bool | None = None,
        forget_rules: bool = False,
        allow_empty: bool = False,
        missing_ok: bool = False,
    ) -> IndexSummary:
        """Bring the index up to date with `folder`; return what changed.

        `exclude` and `include` (gitignore patterns relative to `folder`) and
        `default_excludes` (skip web assets; see `indexer.rules`) are remembered for the
        folder: a later run that leaves one out keeps the remembered value, one that
        gives it replaces it, and `forget_rules` starts again from the defaults. Files
        they leave out that were indexed before are removed.

        The run is atomic: readers see the index as it was until the run publishes its
        result in one commit. Another process writing the same index makes this raise
        `IndexLocked`, or wait for it with `wait`. Files are read, chunked, encoded and
        stored a batch at a time, so memory does not grow with the size of the folder.
        A folder with nothing to index is refused (`SourceNotFound`, most likely a wrong
        path) unless `allow_empty`, as when a watched folder's last file was deleted.
        With `missing_ok`, a folder that is no longer there (deleted, or swapped for a
        file) is taken as empty, as a fresh index would take it: its documents are
        removed, but a root's remembered rules are kept for its return (`watch`).

        Roots indexed on their own inside `folder` are brought up to date too, each with
        its own rules, and those whose folders are gone are forgotten (see
        `indexer.nested_roots`).
        """
        started = time.perf_counter()
        report = self._report = progress or _no_report
        self._counts = _RunCounts()
        folder = Path(folder).expanduser().resolve()
        missing = missing_ok and _no_folder_at(folder)
        if missing and not store_exists(self.target):
            raise SourceNotFound(f"{folder}: no such folder")
        rules = merged(
            self._remembered_rules(folder), exclude, include, default_excludes, forget_rules
        )
        unreadable: list[FileFailure] = []
        sources = (
            []
            if missing
            else list(
                walk_folder(
                    folder, lambda path, why: unreadable.append(_folder_failure(path, why)), rules
                )
            )
        )
        if not sources and not unreadable and not allow_empty and not missing:
            raise SourceNotFound(
                f"{folder}: no files to index here (readable types: .txt .md .rst .html .pdf "
                ".docx .pptx .odt .epub and source code); nothing was changed"
            )
        with self._writable_store(wait) as store:
            summary = IndexSummary(failed=len(unreadable), failures=list(unreadable))
            summary.rules = rules.to_dict()
            summary.missing = missing
            candidates, gone, forgotten = self._plan(
                store, RunRoot(folder, rules), sources, summary
            )
            kill_point("after-scan")
            with store.change() as change:
                if not missing:  # a root that is gone keeps its rules for its return
                    change.record_root(folder, rules.to_json())
                for root in forgotten:  # its files are this folder's now: gone, or moved
                    change.forget_root(root)
                if self.index_type is not None:
                    change.set_index_type(self.index_type)
                # A new path whose content is that of a gone document, read the same way,
                # is that document moved or renamed: it keeps its chunks and vectors. What
                # is left of the gone is removed once every candidate has been read.
                movable: dict[MoveKey, list[StoredDocument]] = {}
                for document in gone:
                    key = move_key(document.sha256, document.path)
                    movable.setdefault(key, []).append(document)
                documents = self._read_candidates(change, candidates, summary, report, movable)
                self._encode_and_store(change, documents, summary, report)
                left = [document.id for same in movable.values() for document in same]
                change.remove_documents(left)
                kill_point("after-delete")
            summary.removed = len(left)
            with store.snapshot() as snapshot:
                counts = snapshot.counts()
            summary.total_documents, summary.total_chunks = counts["documents"], counts["chunks"]
        summary.query_export = self._export_query_model()
        summary.seconds = round(time.perf_counter() - started, 3)
        return summary

    def upsert_records(
        self,
        records: Iterable[dict],
        progress: ProgressCallback | None = None,
        wait: bool = False,
    ) -> RecordSummary:
        """Add or replace records from an app, `{"id", "text", "metadata"}` each, in one
        atomic change (all or nothing), into the same index and spaces as files.

        `id` and `text` are non-empty strings, `metadata` (optional) a flat object of
        string, number or boolean values that `where` filters match; a record whose text
        is unchanged is not encoded again. Bad input raises `InvalidRecord` (an
        `InvalidQuery`) naming the record, before anything is written; another writer
        raises `IndexLocked`, or is waited for with `wait`.
        """
        from indexer.record_runs import upsert_records

        return upsert_records(self, records, progress, wait)

    def delete_records(self, ids: Iterable[str], wait: bool = False) -> RecordSummary:
        """Remove the records with these ids in one atomic change; ids that no record
        has are listed in the summary's `not_found`, not raised."""
        from indexer.record_runs import delete_records

        return delete_records(self, ids, wait)

    def _remembered_rules(self, folder: Path) -> RootRules:
        """The rules the folder's earlier runs left (the defaults for a new index)."""
        if not store_exists(self.target):
            return RootRules()
        store = open_store(self.target)
        try:
            return RootRules.from_json(store.root_rules(folder))
        finally:
            store.close()

    # -- opening -------------------------------------------------------------------------

    @contextmanager
    def _writable_store(self, wait: bool) -> Iterator[Store]:
        """The index, opened or created, with this process as its only writer."""
        new_manifest = None
        if not store_exists(self.target):
            # A model that cannot load, or settings it cannot work with, create nothing.
            new_manifest = self._new_manifest()
            check_can_create(self.target)
        store = open_store(self.target, create=True)
        try:
            with store.writer(wait):
                if store.manifest is None:
                    store.initialise(new_manifest or self._new_manifest())
                    # made for this manifest, which now has its index id
                    self._encoders_made_for = EncoderKey.of(store.manifest, self.precision)
                else:
                    self._check_matches(store.manifest)
                self._run_manifest = store.manifest
                yield store
        finally:
            store.close()

    def _new_manifest(self) -> Manifest:
        loaded = self._encoders_for_new_index()
        content_tokens = loaded.max_tokens - loaded.tokenizer.num_special_tokens_to_add()
        if self.chunk_overlap >= content_tokens // 2:
            raise InvalidSettings(
                f"chunk overlap {self.chunk_overlap} is too large: this model's chunks hold "
                f"{content_tokens} tokens, so the overlap must be below {content_tokens // 2}"
            )
        static = self._encoders["static"]
        return Manifest(
            static=self.static or DEFAULT_STATIC,
            static_settings=static_settings(static),
            space_dims={"static": static.dim} if static.dim != loaded.dim else {},
            model=loaded.name,
            model_fingerprint=loaded.fingerprint,
            pooling=self.pooling or DEFAULT_POOLING,
            dim=loaded.dim,
            max_tokens=loaded.max_tokens,
            chunk_tokens=content_tokens,
            chunk_overlap=self.chunk_overlap,
            version=__version__,
            index_type=self.index_type or DEFAULT_INDEX_TYPE,
            precision=self.precision,
        )

    def _check_matches(self, manifest: Manifest) -> None:
        if self.model_name is not None:
            from indexer.encoders.loading import canonical_model_name

            manifest.check_model(canonical_model_name(self.model_name))
        if self.pooling is not None:
            manifest.check_pooling(self.pooling)
        if self.static is not None:
            manifest.check_static(self.static)

    def _encoders_for_new_index(self):  # -> LoadedModel
        """The model (and encoders) a new index is built with, loaded once."""
        from indexer.encoders.loading import canonical_model_name

        model = canonical_model_name(self.model_name)
        pooling, static = self.pooling or DEFAULT_POOLING, self.static or DEFAULT_STATIC
        held = self._encoders_made_for
        if self._encoders is None or held is None or not held.same_settings(model, pooling, static):
            loaded = self._model_named(model)
            encoders = self._made_encoders(loaded, pooling, static)
            self._encoders = encoders
            self._encoders_made_for = EncoderKey(
                index_id="",  # the store gives it one when it is initialised
                model=loaded.name,
                fingerprint=loaded.fingerprint,
                pooling=pooling,
                static=static,
                static_settings=settings_text(static_settings(encoders["static"])),
                precision=self.precision,
            )
        return self._encoders["loaded"]

    def _model_named(self, name: str, fingerprint: str | None = None):  # -> LoadedModel
        """The held model if it is this one, else this one loaded."""
        if self._encoders is not None:
            held = self._encoders["loaded"]
            if held.name == name and fingerprint in (None, held.fingerprint):
                return held
        return self._load_model(name)

    def _load_model(self, name: str | None):  # -> LoadedModel, imported lazily with torch
        from indexer.encoders.loading import load_model

        self._report(Progress("load-model", 0, 1))
        loaded = load_model(name)
        self._report(Progress("load-model", 1, 1))
        return loaded

    def _made_encoders(self, loaded, pooling: str, static: str) -> dict:
        from indexer.encoders.spaces import space_encoders

        try:
            return {"loaded": loaded, **space_encoders(loaded, pooling, static, self.precision)}
        except ValueError as error:  # e.g. mean-last99 on a six-layer model
            raise InvalidSettings(str(error)) from error

    def _encoders_for(self, manifest: Manifest) -> dict:
        """The encoders of the index whose manifest this is: the held ones if they were
        made for it, else new ones (the model loaded again only if it is another)."""
        key = EncoderKey.of(manifest, self.precision)
        if self._encoders is None or self._encoders_made_for != key:
            loaded = self._model_named(manifest.model, manifest.model_fingerprint)
            manifest.check_model(loaded.name, loaded.fingerprint)
            encoders = self._made_encoders(loaded, manifest.pooling, manifest.static)
            manifest.check_static_settings(static_settings(encoders["static"]))
            self._encoders, self._encoders_made_for = encoders, key
        return self._encoders

    def _export_query_model(self) -> str:
        """Export the loaded model for torch-free queries, once per model (a few seconds).

        A run that did not load the model exports nothing, unless the export it finds in
        the cache is damaged: the model is loaded then, to make it again. Never raises:
        the run has committed, and a failed export costs only the fast path.
        """
        from indexer.encoders.model_cache import entry_state, sweep_staging
        from indexer.encoders.onnx import query_model_dir

        if self._encoders is not None:
            return _export_for_queries(self._encoders["loaded"])
        manifest = self._run_manifest
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
            loaded = self._load_model(manifest.model)
        except Exception as error:  # after the commit, a repair that cannot be is a note
            why = (str(error).strip().splitlines() or [type(error).__name__])[0]
            return f"the damaged ONNX export was not made again ({why})"
        if loaded.fingerprint != manifest.model_fingerprint:
            return f"the damaged ONNX export was not made again ({manifest.model} changed)"
        return _export_for_queries(loaded)

    # -- planning ------------------------------------------------------------------------

    def _plan(
        self, store: Store, run: RunRoot, sources: list[SourceFile], summary: IndexSummary
    ) -> tuple[list[tuple[SourceFile, StoredDocument | None]], list[StoredDocument], list[str]]:
        """The files that may have changed, the documents whose files are gone, and the
        roots nested in the run's folder whose folders are gone (to forget).

        `sources` are the files of the run's folder; each root nested in it is walked
        with its own rules, and a file is the deepest root's (see `indexer.nested_roots`).
        """
        nested = nested_roots(store, run.path)
        roots = [run, *nested.present]
        not_looked_at = tuple(root.rstrip("/") + "/" for root in nested.unknown)
        walked = [
            source
            for source in sources
            if owner(path_text(source.path), roots) is run
            and not path_text(source.path).startswith(not_looked_at)
        ]
        for root in nested.present:
            walked += self._walk_nested(root, roots, summary)
        summary.nested_roots = [path_text(root.path) for root in nested.present]
        summary.forgotten_roots = list(nested.gone)
        stored: dict[str, StoredDocument] = {}
        for root in [path_text(run.path), *nested.recorded]:
            stored.update(store.documents_under(Path(root)))
        candidates = self._changed_candidates(walked, stored, summary)
        present = {path_text(source.path) for source in walked}
        # What an unreadable folder holds is unknown, not gone: its documents stay.
        unknown = not_looked_at + tuple(f.path.rstrip("/") + "/" for f in summary.failures)
        gone = [
            document
            for path, document in stored.items()
            if path not in present and not path.startswith(unknown)
        ]
        return candidates, gone, nested.gone

    def _walk_nested(
        self, root: RunRoot, roots: list[RunRoot], summary: IndexSummary
    ) -> list[SourceFile]:
        """The files of a nested root, walked with its rules (not those under a deeper one)."""
        failures: list[FileFailure] = []
        try:
            found = list(
                walk_folder(
                    root.path,
                    lambda path, why: failures.append(_folder_failure(path, why)),
                    root.rules,
                )
            )
        except SourceNotFound as error:  # unreadable (or just gone): its documents stay
            reason = str(error).removeprefix(f"{root.path}: ")
            failures.append(
                FileFailure(path_text(root.path), f"{reason}; its indexed files are kept")
            )
            found = []
        known = {failure.path for failure in summary.failures}
        for failure in failures:
            if failure.path not in known:
                summary.failed += 1
                summary.failures.append(failure)
        return [source for source in found if owner(path_text(source.path), roots) is root]

    def _changed_candidates(
        self, sources: list[SourceFile], stored: dict[str, StoredDocument], summary: IndexSummary
    ) -> list[tuple[SourceFile, StoredDocument | None]]:
        candidates = []
        for source in sources:
            old = stored.get(path_text(source.path))
            if old and old.size == source.size and old.mtime_ns == source.mtime_ns:
                summary.unchanged += 1
            else:
                candidates.append((source, old))
        return candidates

    def _read_candidates(
        self,
        change: Change,
        candidates: list[tuple[SourceFile, StoredDocument | None]],
        summary: IndexSummary,
        report: ProgressCallback,
        movable: dict[MoveKey, list[StoredDocument]],
    ) -> Iterator[_Pending]:
        """Read and chunk the files that may have changed, one at a time.

        A file whose content hash is unchanged only has its mtime recorded; a new file
        with the content of a gone document, read the same way (in `movable`, see
        `indexer.moves`), takes that document over under its new path, keeping its
        chunks and vectors.
        """
        if not candidates:
            return  # a run that only removes files or changes the index type needs no model
        manifest = change.manifest
        counts = self._counts
        counts.files_total = len(candidates)
        counts.bytes_total = sum(source.size for source, _old in candidates)
        for done, (source, old) in enumerate(candidates, start=1):
            try:
                document = read_document(source)
            except UnreadableFile as error:
                summary.failed += 1
                summary.failures.append(FileFailure(path_text(source.path), str(error)))
            else:
                if reason := why_not_prose(document.text):
                    summary.skipped += 1
                    summary.skipped_files.append(FileFailure(path_text(source.path), reason))
                elif old is not None and old.sha256 == document.sha256:
                    change.touch_document(old.id, document.mtime_ns)
                    summary.unchanged += 1
                    summary.touched += 1
                elif old is None and movable.get(key := move_key(document.sha256, source.path)):
                    moved = movable[key].pop()
                    change.move_document(moved.id, document.path, document.mtime_ns)
                    summary.moved += 1
                    summary.moved_files.append(MovedFile(moved.path, path_text(document.path)))
                else:
                    chunks = chunk_text(
                        document.text,
                        # loaded on the first file to chunk: touched and moved files
                        # need no model
                        self._encoders_for(manifest)["loaded"].token_spans,
                        manifest.chunk_tokens,
                        manifest.chunk_overlap,
                    )
                    chunks = locate_chunks(
                        document.text, path_text(document.path), document.layout, chunks
                    )
                    if len(document.text) >= LARGE_TEXT_CHARACTERS:
                        summary.large_files.append(
                            LargeFile(path_text(document.path), len(document.text), len(chunks))
                        )
                    counts.chunks_known += len(chunks)
                    counts.bytes_read += source.size
                    counts.files_read = done
                    report(counts.progress())
                    yield _Pending(document, chunks, old.id if old else None)
                    continue
            counts.bytes_read += source.size
            counts.files_read = done
            report(counts.progress())

    # -- writing -------------------------------------------------------------------------

    def _encoding_backend(self) -> EncodingBackend:
        if self.ray is None:
            return LocalEncoding(self._encoders_for, self._chunks_encoded)
        from indexer.ray_encoding import RayEncoding

        return RayEncoding(self.ray, self.ray_workers, self.ray_threads)

    def _encode_and_store(
        self,
        change: Change,
        documents: Iterator[_Pending],
        summary: IndexSummary,
        report: ProgressCallback,
    ) -> None:
        """Encode and store documents a batch of about `batch_chunks` chunks at a time.

        The backend gets each batch's chunk texts and gives back its vectors, batch by
        batch and in order; what is written, and when, is the same for every backend.
        """
        manifest = change.manifest

        def batches() -> Iterator[tuple[list[_Pending], list[str]]]:
            for number, batch in enumerate(_batches_by_chunks(documents, self.batch_chunks)):
                if number == 0:  # the manifest records the precision of what was encoded
                    change.set_precision(self.precision)
                yield batch, [chunk.text for item in batch for chunk in item.chunks]

        backend = self._encoding_backend()
        try:
            with closing(backend.encode(manifest, batches())) as encoded:
                for batch, vectors in encoded:
                    self._store_batch(change, batch, vectors, summary)
                    counts = self._counts
                    counts.stored = summary.chunks
                    counts.encoded = max(counts.encoded, summary.chunks)
                    report(counts.progress())
                    kill_point("after-batch")
        finally:
            summary.workers = backend.workers
            backend.close()

    def _chunks_encoded(self, count: int) -> None:
        """`count` more chunks went through the encoder (within a batch: not stored yet)."""
        self._counts.encoded += count
        self._report(self._counts.progress())

    def _store_batch(
        self, change: Change, batch: list[_Pending], vectors: dict, summary: IndexSummary
    ) -> None:
        change.remove_documents(item.replaces for item in batch if item.replaces is not None)
        new, offset = [], 0
        for item in batch:
            end = offset + len(item.chunks)
            own = {name: matrix[offset:end] for name, matrix in vectors.items()}
            new.append(NewDocument(item.document, item.chunks, own, item.metadata))
            offset = end
            if item.replaces is None:
                summary.added += 1
            else:
                summary.updated += 1
        change.add_documents(new)
        summary.chunks += offset


@dataclass
class _RunCounts:
    """What a run has done so far, as its `index` progress reports say it."""

    files_read: int = 0
    files_total: int = 0
    bytes_read: int = 0
    bytes_total: int = 0
    chunks_known: int = 0
    encoded: int = 0
    stored: int = 0

    def progress(self) -> Progress:
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


def _no_report(_event: Progress) -> None:
    pass


def _export_for_queries(loaded) -> str:  # loaded: LoadedModel
    """`ready` once the model's ONNX export is in the model cache, else why it is not."""
    from indexer.encoders.export import ExportFailed, export_query_model, previous_failure

    failure = previous_failure(loaded.fingerprint)
    if failure is not None:
        return f"not possible here: {failure}"
    try:
        export_query_model(loaded)
    except ExportFailed as error:
        return str(error)
    return "ready"


def _no_folder_at(path: Path) -> bool:
    """Whether nothing, or something that is no folder, is at `path` (a folder that cannot
    be looked at is there: the walk says why it cannot be read)."""
    try:
        return not stat.S_ISDIR(path.stat().st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False


def _folder_failure(path: Path, reason: str) -> FileFailure:
    return FileFailure(
        path_text(path), f"cannot list the folder ({reason}); its indexed files are kept"
    )


def _batches_by_chunks(documents: Iterable[_Pending], size: int) -> Iterator[list[_Pending]]:
    """Group documents into batches of about `size` chunks (a document is never split)."""
    current: list[_Pending] = []
    count = 0
    for item in documents:
        current.append(item)
        count += len(item.chunks)
        if count >= size:
            yield current
            current, count = [], 0
    if current:
        yield current
