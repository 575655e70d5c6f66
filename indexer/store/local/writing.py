"""The write side of an index folder: SQLAlchemy over its SQLite file, for the writer.

Every change is published atomically. A writer changes SQL inside one transaction and
keeps what it removes from and adds to each vector space; it writes that as the next
generation's delta segment of the space (or, when deltas pile up, the space whole as a
new base: `segments.py`), then commits the manifest that names the files of every space
with the rest: the commit is the instant the new state appears. A crash before it
leaves the old state whole (SQLite rolls back, the new files are named by nothing and
swept); a crash after it leaves the new state whole.

`LocalStore` makes one `FolderWriter` when it first writes (or migrates): a process that
only reads never imports SQLAlchemy.
"""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from indexer.errors import CtxsearchError, IndexCorrupt, SpaceFileMissing
from indexer.faults import kill_point
from indexer.store import writer_rows
from indexer.store.base import (
    ModelText,
    NewDocument,
    RebuildProgress,
    SpaceEncoder,
    StoredDocument,
)
from indexer.store.content_keys import encoding_settings
from indexer.store.local import fts
from indexer.store.local.database import WRITE, sqlite_engine, sqlite_errors
from indexer.store.local.index_files import (
    DATABASE_FILE,
    space_file,
    space_files,
    space_temporaries,
)
from indexer.store.local.lock import WriterLock
from indexer.store.local.segments import Segments, named_files
from indexer.store.manifest import QUANTIZED_FORMAT, SEGMENTED_FORMAT, Manifest
from indexer.store.migrations import migrate
from indexer.store.row_change import RowChange
from indexer.store.sql_reads import counts

if TYPE_CHECKING:
    from indexer.store.local.space_edit import SpaceEdit

REBUILD_BATCH = 256


class Owner(Protocol):
    """The store a writer writes for: it keeps the store's manifest at what is published."""

    directory: Path
    target: str
    host: str
    manifest: Manifest | None

    def read_manifest(self) -> Manifest | None:
        """The manifest the database publishes now."""
        ...


class FolderWriter:
    """Migrations, the writer lock, and the change and rebuild transactions of a folder."""

    def __init__(self, store: Owner):
        self.store = store
        self.directory = store.directory
        self.where = store.target
        self.engine = sqlite_engine(self.directory / DATABASE_FILE)
        self._lock: WriterLock | None = None
        self._unfinished: set[Session] = set()  # publishes begun and not ended yet

    def migrate(self) -> None:
        """Apply the migrations the database lacks (making a new index's file)."""
        with (
            sqlite_errors(self.where),
            self.engine.execution_options(**{WRITE: True}).begin() as connection,
        ):
            migrate(connection)

    @contextmanager
    def writer(self, wait: bool) -> Iterator[None]:
        """Hold the folder's writer lock (flock on `write.lock`) for the block."""
        with WriterLock(self.directory).acquire(wait) as lock:
            self._lock = lock
            try:
                self.store.manifest = self.store.read_manifest()
                self.sweep()
                yield
            finally:
                # A change whose `with` a signal stopped between its enter and its body
                # is never left; it is settled here, while the lock is held, rather than
                # by the garbage collector once it is let go.
                for session in list(self._unfinished):
                    self._settle_stopped_publish(session)
                    session.close()
                self._lock = None

    def _check_writer(self) -> None:
        if self._lock is None:
            raise RuntimeError("take the writer lock (`with store.writer():`) first")

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with sqlite_errors(self.where), Session(self.engine) as session:
            yield session

    def initialise(self, manifest: Manifest) -> None:
        """Publish the manifest and the empty generation-0 spaces of a new index."""
        from indexer.store.local.vectors import VectorSpace

        self._check_writer()
        manifest = copy.deepcopy(manifest)
        manifest.created_at = manifest.updated_at = time.time()
        manifest.generation = 0
        manifest.format = SEGMENTED_FORMAT
        manifest.index_id = uuid.uuid4().hex
        manifest.lexical = dict(fts.SETTINGS)
        for name in manifest.spaces:
            VectorSpace(manifest.dim_of(name)).save_to(space_file(self.directory, name, 0))
            manifest.segments[name] = Segments(base=0, structure="flat").to_json()
        with self._session() as session, session.begin():
            writer_rows.write_manifest(session, manifest)
        self.store.manifest = manifest

    def documents_under(self, root: Path) -> dict[str, StoredDocument]:
        """This machine's documents at `root` (a file root) or under it (not those of
        roots nested in it)."""
        with self._session() as session:
            return writer_rows.documents_under(session, self.store.host, root)

    def root_rules(self, root: Path) -> str | None:
        """The rules (JSON) remembered for this host's root `root`, or None."""
        with self._session() as session:
            return writer_rows.root_rules(session, self.store.host, root)

    def roots_under(self, root: Path) -> list[str]:
        """The roots indexed on their own strictly under `root`."""
        with self._session() as session:
            return writer_rows.roots_under(session, self.store.host, root)

    @contextmanager
    def change(self) -> Iterator[LocalChange]:
        """A change of SQL and of the spaces, published on leaving (as delta segments)."""
        self._check_writer()
        manifest = self._current_manifest()
        spaces = self._edit_spaces(manifest)
        with self._publishing(manifest, spaces) as session:
            yield LocalChange(session, spaces, manifest, self.store.host)

    def merge(self) -> dict[str, int]:
        """Merge every space's deltas into a new base, published as the next generation."""
        self._check_writer()
        manifest = self._current_manifest()
        spaces = self._edit_spaces(manifest)
        with self._publishing(manifest, spaces, merge=True) as session:
            session.info["changed"] = True
        return {"generation": manifest.generation}

    def rebuild(
        self,
        encode: SpaceEncoder,
        progress: RebuildProgress | None,
        model_text: ModelText | None = None,
    ) -> dict[str, int]:
        """Re-encode every stored chunk into new spaces, rebuild FTS5, publish."""
        from indexer.store.local.space_edit import SpaceEdit

        self._check_writer()
        manifest = self._current_manifest()
        spaces = {
            name: SpaceEdit(self.directory, name, manifest.dim_of(name), None)
            for name in manifest.spaces
        }
        with self._publishing(manifest, spaces) as session:
            encoding = encoding_settings(manifest)
            total, done, last = counts(writer_rows.session_rows(session))["chunks"], 0, 0
            while batch := writer_rows.chunk_texts(session, last, REBUILD_BATCH, model_text):
                ids = np.asarray([chunk_id for chunk_id, _ in batch], dtype=np.int64)
                writer_rows.set_content_keys(
                    session, ids.tolist(), [value for _, value in batch], encoding
                )
                vectors = encode([value for _, value in batch])
                for name, space in spaces.items():
                    space.add(ids, vectors[name])
                done, last = done + len(batch), int(ids[-1])
                if progress is not None:
                    progress(done, total)
            session.execute(text(fts.REBUILD))
            manifest.unfilled = []  # every chunk was encoded into every space
            session.info["changed"] = True
        return {"chunks": done, "generation": manifest.generation}

    def _current_manifest(self) -> Manifest:
        if self.store.manifest is None:
            raise IndexCorrupt(f"{self.directory}: the index has no manifest")
        return copy.deepcopy(self.store.manifest)

    def _edit_spaces(self, manifest: Manifest) -> dict[str, SpaceEdit]:
        """The writer's views of the published spaces (readers' stay as they are), after
        checking that every file the manifest names is there."""
        from indexer.store.local.space_edit import SpaceEdit

        for path in sorted(named_files(self.directory, manifest)):
            if not path.exists():
                raise SpaceFileMissing(
                    f"{self.directory}: the vector space file {path.name} is missing: run "
                    "`ctxsearch repair` to rebuild it from the stored passages"
                )
        return {
            name: SpaceEdit(
                self.directory, name, manifest.dim_of(name), Segments.of(manifest, name)
            )
            for name in manifest.spaces
        }

    @contextmanager
    def _publishing(
        self, manifest: Manifest, spaces: dict[str, SpaceEdit], merge: bool = False
    ) -> Iterator[Session]:
        """One write transaction; on leaving, write each changed space's delta (or new
        base: always with `merge`) as the next generation's files and commit the manifest
        that names them. A change that changed nothing publishes nothing.

        Whatever stops it (an error, a signal at any statement, the commit's included),
        the clean-up asks the database which generation is published, keeps its files and
        sweeps the others: the old state if the commit did not happen, the new one if it did.
        """
        next_generation = manifest.generation + 1
        with sqlite_errors(self.where):
            session = Session(self.engine.execution_options(**{WRITE: True}))
            self._unfinished.add(session)
            try:
                session.begin()
                session.info["changed"] = False
                yield session
                if not session.info["changed"]:
                    session.rollback()
                    return
                kill_point("before-space-save")
                vectors = counts(writer_rows.session_rows(session))["chunks"]
                for name, space in spaces.items():
                    segments = space.publish(
                        next_generation, vectors, manifest.index_type, merge, manifest.quantize
                    )
                    manifest.segments[name] = segments.to_json()
                manifest.generation = next_generation
                manifest.format = max(manifest.format, SEGMENTED_FORMAT)  # older code refuses
                if any("-" in s.get("structure", "") for s in manifest.segments.values()):
                    manifest.format = max(manifest.format, QUANTIZED_FORMAT)  # older code refuses
                manifest.updated_at = time.time()
                writer_rows.write_manifest(session, manifest)
                kill_point("before-publish")
                session.commit()
                kill_point("after-commit")
            except BaseException:
                self._settle_stopped_publish(session)
                raise
            finally:
                self._unfinished.discard(session)
                session.close()
        self.store.manifest = manifest
        kill_point("after-publish")
        self.sweep()

    def _settle_stopped_publish(self, session: Session) -> None:
        """After a publish stopped before its end, perhaps after its commit: roll back what
        did not commit, then keep the files of what the database publishes, sweep the rest.

        A failure here is left to the next writer's sweep, so that the error that stopped
        the publish is the one reported (a second signal simply ends this early: the
        sweep never deletes the published generation's files).
        """
        if session.info.get("settled"):  # when the writer lock was let go (see `writer`)
            return
        session.info["settled"] = True
        with suppress(SQLAlchemyError):  # refused in the state a stopped commit leaves
            session.rollback()
        with suppress(CtxsearchError, SQLAlchemyError, OSError):
            self.store.manifest = self.store.read_manifest()
            self.sweep()

    def sweep(self) -> None:
        """Delete every space file the published manifest does not name, and leftover
        temporary files (writer only: holding the writer lock, nobody else publishes or
        saves meanwhile). The manifest is read from the database, never from memory,
        which may be behind it: a stopped publish may have committed."""
        self._check_writer()
        manifest = self.store.read_manifest()
        kept = named_files(self.directory, manifest) if manifest is not None else set()
        for path, _space, _generation in space_files(self.directory):
            if path not in kept:
                path.unlink(missing_ok=True)
                kill_point("mid-sweep")
        for leftover in space_temporaries(self.directory):
            leftover.unlink(missing_ok=True)

    def dispose(self) -> None:
        """Release the engine's connections."""
        self.engine.dispose()


class LocalChange(RowChange):
    """The writer's view inside `change()`: SQL rows and spaces kept in step."""

    def __init__(
        self, session: Session, spaces: dict[str, SpaceEdit], manifest: Manifest, host: str
    ):
        super().__init__(session, manifest, host)
        self.spaces = spaces

    def remove_documents(self, document_ids: Iterable[int]) -> int:
        """Remove documents, their chunks, and their vectors from every space."""
        chunk_ids = self._delete_rows(document_ids)
        for space in self.spaces.values():
            space.remove(chunk_ids)
        return len(chunk_ids)

    def add_documents(self, documents: Sequence[NewDocument]) -> list[list[int]]:
        """Insert documents and chunks, and add each chunk's vectors under its new id."""
        if not documents:
            return []
        stored, ids = self._insert_rows(documents)
        for name, (kept, vectors) in self._documents_vectors(ids, documents).items():
            self.spaces[name].add(kept, vectors)
        return stored

    def _vectors_of(self, space: str, chunk_ids: np.ndarray) -> dict[int, np.ndarray]:
        """The vectors of these chunks in the change's copy of `space` (those it holds)."""
        return self.spaces[space].vectors(chunk_ids.tolist())

    def _drop_vectors(self, chunk_ids: np.ndarray) -> None:
        for space in self.spaces.values():
            space.remove(chunk_ids)

    def _add_space_vectors(self, space: str, chunk_ids: np.ndarray, vectors: np.ndarray) -> None:
        self.spaces[space].add(chunk_ids, vectors)
