"""The writer: an `Indexer` keeps its settings and its encoders and starts runs.

Each call (`index_folder`, `upsert_records`, `delete_records`) is one run with its own
state (`indexer.runs.run`): a folder run (`indexer.runs.folders`) or a record run
(`indexer.runs.record_changes`). The encoders live on (`indexer.encoders.for_index`),
checked against the manifest of the index at every run, so a long-lived writer
(`watch`, `serve --writable`, an app) loads its model once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.encoders.for_index import EncoderHolder, IndexEncoders
from indexer.faults import kill_point
from indexer.runs.folders import (
    LARGE_TEXT_CHARACTERS,
    FileFailure,
    FollowedLink,
    IndexSummary,
    LargeFile,
    MovedFile,
    index_folder,
    recorded_root,
)
from indexer.runs.progress import Progress, ProgressCallback
from indexer.runs.run import Run
from indexer.runs.write_settings import DEFAULT_OVERLAP, DEFAULT_POOLING, WriteSettings
from indexer.splitting.split_cache import GaveWay, SplitCache
from indexer.store.backends import normalise_target, open_store, store_exists
from indexer.store.base import Target

if TYPE_CHECKING:
    from indexer.runs.record_changes import RecordSummary

__all__ = [
    "DEFAULT_OVERLAP",
    "DEFAULT_POOLING",
    "LARGE_TEXT_CHARACTERS",
    "FileFailure",
    "FollowedLink",
    "IndexSummary",
    "Indexer",
    "LargeFile",
    "MovedFile",
    "Progress",
    "ProgressCallback",
    "WriteSettings",
    "normalise_target",
]


# Files this large are split ahead by `warm_split_cache`: a cold split of a 4 MB page
# (1.4M characters, 2,600 passages) takes seconds, of a small file milliseconds.
WARM_SPLIT_BYTES = 256 * 1024


class Indexer:
    """Builds and updates an index from folders of documents.

    `index` is a folder (the embedded SQLite + FAISS store) or a `postgresql+psycopg://`
    URL. `settings` say how it indexes (`WriteSettings`: the model, pooling and static
    space of a new index, the vector index type and quantization, batching, Ray,
    precision, chunk overlap; each described in `indexer.runs.write_settings`). The same
    settings given as keywords are a shorthand: `Indexer(index, model="hashed-words")`
    is `Indexer(index, settings=WriteSettings(model="hashed-words"))`, and keywords
    given with `settings` replace those of it. Settings that cannot work are refused
    here (`InvalidSettings`), before anything is read or written; a model, pooling or
    static space other than an existing index's raises `ModelMismatch` at its run.
    """

    def __init__(self, index: Target, *, settings: WriteSettings | None = None, **options: Any):
        if options:
            settings = replace(settings, **options) if settings else WriteSettings(**options)
        self.settings = settings or WriteSettings()
        self.target = normalise_target(index)
        self.settings.check_target(self.target)
        # The loaded model and one encoder per space, kept for the next runs and checked
        # against the manifest of the index at every one (see `indexer.encoders.encoder_key`).
        self.encoders = EncoderHolder(self.settings.precision)
        # What splitting learnt of the files it split, for the next runs: a file edited
        # under `watch` is tokenised and cut again only around the edit.
        self.split_cache = SplitCache()

    @property
    def precision(self) -> str:
        """What the contextual encoder computes in: fp32 or bf16."""
        return self.settings.precision

    def run(self, progress: ProgressCallback | None = None) -> Run:
        """A new run of this writer, reporting to `progress` (for a kind of run of
        one's own; `index_folder` and `upsert_records` each make one)."""
        return Run(self.target, self.settings, self.encoders, progress, self.split_cache)

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
        follow_links_outside: bool | None = None,
    ) -> IndexSummary:
        """Bring the index up to date with `folder`; return what changed.

        `exclude` and `include` (gitignore patterns relative to `folder`) and
        `default_excludes` (skip web assets; see `indexer.reading.rules`) are remembered for the
        folder: a later run that leaves one out keeps the remembered value, one that
        gives it replaces it, and `forget_rules` starts again from the defaults. Files
        they leave out that were indexed before are removed. So is `follow_links_outside`
        (default off): whether a link to a file outside `folder` is read. Unfollowed, it
        is listed in the summary's `skipped_files` (so is a link to a folder outside:
        folder links are never followed), and its document, if one was indexed, removed.

        A `folder` given as a link is recorded as that link (the links of the folders
        above it are resolved), and each run follows it to where it leads then.

        The run is atomic: readers see the index as it was until the run publishes its
        result in one commit, its new passages with their lexical entries and static
        vectors; then their contextual vectors follow, `fill_batch_chunks` at a time, each
        batch published (`indexer.runs.fill`; one commit for all with 0), and any left by
        an interrupted run are filled too. Another process writing the same index makes this raise
        `IndexLocked`, or wait for it with `wait`. Files are read, chunked, encoded and
        stored a batch at a time, so memory does not grow with the size of the folder.
        A folder with nothing to index is refused (`SourceNotFound`, most likely a wrong
        path) unless `allow_empty`, as when a watched folder's last file was deleted.
        With `missing_ok`, a folder that is no longer there (deleted, or swapped for a
        file) is taken as empty, as a fresh index would take it: its documents are
        removed, but a root's remembered rules are kept for its return (`watch`).

        Roots indexed on their own inside `folder` are brought up to date too, each with
        its own rules, and those whose folders are gone are forgotten (see
        `indexer.runs.nested_roots`).
        """
        return index_folder(
            self.run(progress),
            folder,
            wait,
            exclude,
            include,
            default_excludes,
            forget_rules,
            allow_empty,
            missing_ok,
            follow_links_outside,
        )

    def index_file(
        self,
        file: str | Path,
        progress: ProgressCallback | None = None,
        wait: bool = False,
        missing_ok: bool = False,
    ) -> IndexSummary:
        """Bring the index up to date with one file, indexed as a root of its own (see
        `indexer.runs.file_roots`); return what changed.

        The file is read when it changed since its last run, and only it: never a file
        beside it. A file under a folder root of the index is that root's: nothing
        changes, and the summary's `covered_by` names the root. A file that is not
        there is refused (`SourceNotFound`) unless it is a file root of the index, or
        `missing_ok`: then its document is removed and the root kept for its return
        (`remove` forgets it). A file of a format not read is refused (`SourceNotFound`).
        Atomic, locked and waited for like `index_folder`.
        """
        from indexer.runs.file_roots import index_file

        return index_file(self.run(progress), file, wait, missing_ok)

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
        from indexer.runs.record_changes import upsert_records

        return upsert_records(self.run(progress), records, wait)

    def delete_records(self, ids: Iterable[str], wait: bool = False) -> RecordSummary:
        """Remove the records with these ids in one atomic change; ids that no record
        has are listed in the summary's `not_found`, not raised."""
        from indexer.runs.record_changes import delete_records

        return delete_records(self.target, ids, wait)

    def warm_split_cache(
        self,
        folder: str | Path,
        min_bytes: int = WARM_SPLIT_BYTES,
        give_way: Callable[[], bool] | None = None,
    ) -> int:
        """Split (not encode, not store) the indexed files under `folder` of at least
        `min_bytes` bytes, so that this writer's first split of each after an edit is
        made only where it changed (`indexer.splitting.split_cache`; `watch` does this
        beside its runs once the model is loaded). Files that cannot be read now are
        left out. Returns how many files were split.

        It gives way to the splits of runs: as soon as one wants the split cache, or
        `give_way()` is true, `GaveWay` rises (what was split so far stays in the cache,
        and a next call splits it again at the price of a look-up)."""
        from indexer.errors import UnreadableFile
        from indexer.reading.sources import SourceFile, read_document

        if not store_exists(self.target):
            return 0
        root = recorded_root(self.target, folder)
        store = open_store(self.target)
        try:
            assert store.manifest is not None  # open_store refuses an index without one
            manifest = store.manifest
            documents = store.documents_under(root)
        finally:
            store.close()
        run = self.run()
        split = 0
        for path, document in documents.items():
            if document.size < min_bytes:
                continue
            kill_point("warm-split")
            if give_way is not None and give_way():
                raise GaveWay
            try:
                read = read_document(SourceFile(Path(path), document.size, document.mtime_ns))
            except (UnreadableFile, OSError):
                continue
            run.warm(manifest, read.text, path, read.layout, give_way or _never)
            split += 1
        return split

    def load_encoders(self) -> IndexEncoders:
        """Load the model and make the encoders of the index as it is now (of a new one
        with this writer's settings, if there is none yet), so that the next run finds
        them ready: a server does this before it says it is. Every run still checks them
        against the index it writes into."""
        if not store_exists(self.target):
            return self.encoders.for_new_index(*self.settings.new_index_settings())
        store = open_store(self.target)
        try:
            assert store.manifest is not None  # open_store refuses an index without one
            self.settings.check_matches(store.manifest)
            return self.encoders.for_index(store.manifest)
        finally:
            store.close()


def _never() -> bool:
    return False
