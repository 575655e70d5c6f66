"""The embedded store: an index folder holding a SQLite database and FAISS files.

Every change is published atomically. A writer changes SQL inside one transaction and
the vector spaces in memory, saves the spaces as the next generation's files, then
commits the new generation number with the rest: the commit is the instant the new
state appears. A crash before it leaves the old state whole (SQLite rolls back, the
new files are ignored and swept); a crash after it leaves the new state whole.
A snapshot is one SQLite read transaction plus the spaces of the generation it names,
so readers see the old state or the new one, never a mix.
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy.exc import DatabaseError, SQLAlchemyError
from sqlalchemy.orm import Session

from indexer.errors import (
    CtxsearchError,
    IndexClosed,
    IndexCorrupt,
    IndexNotFound,
    SpaceFileMissing,
    StoreWriteFailed,
)
from indexer.faults import kill_point
from indexer.store import records
from indexer.store.base import (
    NewDocument,
    Ranked,
    RebuildProgress,
    SpaceEncoder,
    StoredDocument,
    VerifyReport,
)
from indexer.store.filters import SearchFilter
from indexer.store.local import fts
from indexer.store.local.database import WRITE, is_read_only_error, sqlite_engine, sqlite_errors
from indexer.store.local.layout import (
    DATABASE_FILE,
    LOCK_FILE,
    check_is_index,
    file_identity,
    is_index,
    space_file,
    space_files,
)
from indexer.store.local.lock import WriterLock
from indexer.store.local.space_reads import SpaceReads
from indexer.store.manifest import Manifest
from indexer.store.migrations import migrate, pending
from indexer.store.sql_views import RowChange, RowSnapshot

if TYPE_CHECKING:
    from indexer.store.local.vectors import VectorSpace

_OPEN_ATTEMPTS = 20
REBUILD_BATCH = 256


class LocalStore:
    """An index folder: SQLite (manifest, documents, chunks, FTS5) and FAISS spaces."""

    host = ""  # an embedded index belongs to the machine whose disk holds it

    def __init__(self, directory: Path, create: bool = False, read_only: bool = False):
        self.directory = Path(directory).expanduser().absolute()
        self.target = str(self.directory)
        self.database = self.directory / DATABASE_FILE
        if not create:
            check_is_index(self.directory)
        elif not is_index(self.directory):
            check_folder_can_hold_index(self.directory)
            _clear_aborted_creation(self.directory)
            self.directory.mkdir(parents=True, exist_ok=True)
        self._writer_lock: WriterLock | None = None
        # The spaces readers share, with the identity and generation they belong to.
        self._loaded: tuple[tuple[str, int], dict[str, VectorSpace]] | None = None
        self._loading = threading.Lock()
        self._closed = False
        self._connect(read_only)
        if self.manifest is None and not create:
            self.engine.dispose()
            raise IndexCorrupt(
                f"{self.directory}: the index has no manifest (its first run was "
                "interrupted: run `ctxsearch index` again)"
            )

    def _connect(self, read_only: bool) -> None:
        """Open the database (read-only and immutable where it cannot be written) and
        bring its schema up to date; remember which file it is."""
        self.read_only = read_only
        self.engine = sqlite_engine(self.database, read_only=read_only)
        try:
            with sqlite_errors(self.target):
                self._migrate()  # creates the file of a new index
                self._identity = file_identity(self.database)
                self.manifest = self._read_manifest()
        except Exception as error:
            self.engine.dispose()
            if not read_only and is_read_only_error(error.__cause__ or error):
                self._connect(read_only=True)  # a read-only folder or mount: read as is
                return
            raise

    def _migrate(self) -> None:
        with self.engine.connect() as connection:
            needed = pending(connection)
        if needed and not self.read_only:
            with self.engine.execution_options(**{WRITE: True}).begin() as connection:
                migrate(connection)

    def _follow_replacement(self) -> None:
        """Notice an index removed, or removed and built again, at this folder while open.

        A new database file means a new index: drop every connection and loaded space of
        the old one and read the new one. A missing one is an error, not an empty index.
        """
        if self._closed:
            raise IndexClosed(f"{self.directory}: the index was closed")
        try:
            identity = file_identity(self.database)
        except FileNotFoundError:
            raise IndexNotFound(f"{self.directory}: the index was removed") from None
        if identity == self._identity:
            return
        with self._loading:
            if identity != self._identity:
                old = self.engine
                self._loaded = None
                self._connect(self.read_only)
                old.dispose()

    def _read_manifest(self) -> Manifest | None:
        with Session(self.engine) as session:
            return records.read_manifest(session)

    # -- writing -------------------------------------------------------------------------

    @contextmanager
    def writer(self, wait: bool = False) -> Iterator[None]:
        """Hold the folder's writer lock (flock on `write.lock`) for the block."""
        if self.read_only:
            raise StoreWriteFailed(f"{self.directory}: the index is read-only here")
        with sqlite_errors(self.target), WriterLock(self.directory).acquire(wait) as lock:
            self._writer_lock = lock
            try:
                self.manifest = self._read_manifest()
                self.sweep()
                yield
            finally:
                self._writer_lock = None

    def _check_writer(self) -> None:
        if self._writer_lock is None:
            raise RuntimeError("take the writer lock (`with store.writer():`) first")

    def initialise(self, manifest: Manifest) -> None:
        """Publish the manifest and the empty generation-0 spaces of a new index."""
        from indexer.store.local.vectors import VectorSpace

        self._check_writer()
        manifest = copy.deepcopy(manifest)
        manifest.created_at = manifest.updated_at = time.time()
        manifest.generation = 0
        manifest.index_id = uuid.uuid4().hex
        manifest.lexical = dict(fts.SETTINGS)
        for name in manifest.spaces:
            VectorSpace(manifest.dim_of(name)).save_to(space_file(self.directory, name, 0))
        with sqlite_errors(self.target), self._write_session() as session:
            records.write_manifest(session, manifest)
        self.manifest = manifest

    @contextmanager
    def _write_session(self) -> Iterator[Session]:
        with Session(self.engine.execution_options(**{WRITE: True})) as session, session.begin():
            yield session

    def documents_under(self, root: Path) -> dict[str, StoredDocument]:
        """This machine's documents under `root` (not those of roots nested in it)."""
        with sqlite_errors(self.target), Session(self.engine) as session:
            return records.documents_under(session, self.host, root)

    def root_rules(self, root: Path) -> str | None:
        """The rules (JSON) remembered for this host's root `root`, or None."""
        with sqlite_errors(self.target), Session(self.engine) as session:
            return records.root_rules(session, self.host, root)

    def roots_under(self, root: Path) -> list[str]:
        """The roots indexed on their own strictly under `root`."""
        with sqlite_errors(self.target), Session(self.engine) as session:
            return records.roots_under(session, self.host, root)

    @contextmanager
    def change(self) -> Iterator[LocalChange]:
        """A change of SQL and of in-memory copies of the spaces, published on leaving."""
        self._check_writer()
        manifest = self._current_manifest()
        spaces = self._load_spaces(manifest)
        with self._publishing(manifest, spaces) as session:
            yield LocalChange(session, spaces, manifest, self.host)

    def rebuild(
        self, encode: SpaceEncoder, progress: RebuildProgress | None = None
    ) -> dict[str, int]:
        """Re-encode every stored chunk into new spaces, rebuild FTS5, publish."""
        from indexer.store.local.vectors import VectorSpace

        self._check_writer()
        manifest = self._current_manifest()
        spaces = {name: VectorSpace(manifest.dim_of(name)) for name in manifest.spaces}
        with self._publishing(manifest, spaces) as session:
            total, done, last = records.counts(session)["chunks"], 0, 0
            while batch := records.chunk_texts(session, last, REBUILD_BATCH):
                ids = np.asarray([chunk_id for chunk_id, _ in batch], dtype=np.int64)
                vectors = encode([value for _, value in batch])
                for name, space in spaces.items():
                    space.add(ids, vectors[name])
                done, last = done + len(batch), int(ids[-1])
                if progress is not None:
                    progress(done, total)
            fts.rebuild_fts(session.connection())
            session.info["changed"] = True
        return {"chunks": done, "generation": manifest.generation}

    def _current_manifest(self) -> Manifest:
        if self.manifest is None:
            raise IndexCorrupt(f"{self.directory}: the index has no manifest")
        return copy.deepcopy(self.manifest)

    @contextmanager
    def _publishing(self, manifest: Manifest, spaces: dict[str, VectorSpace]) -> Iterator[Session]:
        """One write transaction; on leaving, save the spaces as the next generation and
        commit it with the manifest. A change that changed nothing publishes nothing.

        Whatever stops it (an error, a signal at any statement, the commit's included),
        the clean-up asks the database which generation is published, keeps its files and
        sweeps the others: the old state if the commit did not happen, the new one if it did.
        """
        next_generation = manifest.generation + 1
        with sqlite_errors(self.target):
            session = Session(self.engine.execution_options(**{WRITE: True}))
            try:
                session.begin()
                session.info["changed"] = False
                yield session
                if not session.info["changed"]:
                    session.rollback()
                    return
                kill_point("before-space-save")
                for name, space in spaces.items():
                    space.restructure(manifest.index_type)
                    space.save_to(space_file(self.directory, name, next_generation))
                manifest.generation = next_generation
                manifest.updated_at = time.time()
                records.write_manifest(session, manifest)
                kill_point("before-publish")
                session.commit()
                kill_point("after-commit")
            except BaseException:
                self._settle_stopped_publish(session)
                raise
            finally:
                session.close()
        self.manifest = manifest
        kill_point("after-publish")
        self.sweep()

    def _settle_stopped_publish(self, session: Session) -> None:
        """After a publish stopped before its end, perhaps after its commit: roll back what
        did not commit, then keep the files of what the database publishes, sweep the rest.

        A failure here is left to the next writer's sweep, so that the error that stopped
        the publish is the one reported (a second signal simply ends this early: the
        sweep never deletes the published generation's files).
        """
        with suppress(SQLAlchemyError):  # refused in the state a stopped commit leaves
            session.rollback()
        with suppress(CtxsearchError, SQLAlchemyError, OSError):
            self.manifest = self._read_manifest()
            self.sweep()

    def sweep(self) -> None:
        """Delete the space files of every generation but the one the database publishes,
        and leftover temporary files (writer only: holding the writer lock, nobody else
        publishes or saves meanwhile). The generation is read from the database, never
        from memory, which may be behind it: a stopped publish may have committed."""
        self._check_writer()
        with sqlite_errors(self.target):
            manifest = self._read_manifest()
        published = manifest.generation if manifest else 0
        for path, _space, generation in space_files(self.directory):
            if generation != published:
                path.unlink(missing_ok=True)
                kill_point("mid-sweep")
        for leftover in self.directory.glob(".*.faiss.tmp-*"):
            leftover.unlink(missing_ok=True)

    # -- reading -------------------------------------------------------------------------

    @contextmanager
    def snapshot(self, spaces: Iterable[str] | None = None) -> Iterator[LocalSnapshot]:
        """A read transaction and the spaces of the generation it sees (all of them: they
        are loaded once per generation and shared by every reader, so `spaces`, the
        ones this snapshot will search, changes nothing here)."""
        self._follow_replacement()
        with sqlite_errors(self.target):
            for attempt in range(1, _OPEN_ATTEMPTS + 1):
                with Session(self.engine) as session:
                    manifest = records.read_manifest(session)  # starts the read transaction
                    if manifest is None:
                        raise IndexCorrupt(f"{self.directory}: the index has no manifest")
                    try:
                        spaces = self._spaces_for_reading(manifest)
                    except SpaceFileMissing:
                        if attempt == _OPEN_ATTEMPTS:
                            raise  # not a writer's sweep: the file is gone
                        continue  # a writer published and swept this generation: read again
                    yield LocalSnapshot(session, spaces, manifest)
                    return

    def _spaces_for_reading(self, manifest: Manifest) -> dict[str, VectorSpace]:
        """The spaces of the manifest's generation, loaded once and shared by readers."""
        key = (manifest.index_id, manifest.generation)
        with self._loading:
            if self._loaded is None or self._loaded[0] != key:
                self._loaded = (key, self._load_spaces(manifest))
            return self._loaded[1]

    def _load_spaces(self, manifest: Manifest) -> dict[str, VectorSpace]:
        from indexer.store.local.vectors import VectorSpace

        return {
            name: VectorSpace(
                manifest.dim_of(name), space_file(self.directory, name, manifest.generation)
            )
            for name in manifest.spaces
        }

    # -- describing, checking ------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """The manifest, the counts of documents and chunks, and the size of each file."""
        from indexer.store.local.describe import describe_folder

        return describe_folder(self.directory)

    def verify(self) -> VerifyReport:
        """Cross-check SQLite, every FAISS space and the FTS5 space."""
        from indexer.store.local.verify import verify_store

        return verify_store(self)

    def close(self) -> None:
        """Release the database and the loaded spaces; the store answers no more."""
        self._closed = True
        self._loaded = None
        self.engine.dispose()


class LocalChange(RowChange):
    """The writer's view inside `LocalStore.change()`: SQL rows and spaces kept in step."""

    def __init__(
        self, session: Session, spaces: dict[str, VectorSpace], manifest: Manifest, host: str
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
        for name, space in self.spaces.items():
            space.add(ids, np.concatenate([item.vectors[name] for item in documents]))
        return stored


class LocalSnapshot(SpaceReads, RowSnapshot):
    """One SQLite read transaction and the FAISS spaces of the generation it sees."""

    def __init__(self, session: Session, spaces: dict[str, VectorSpace], manifest: Manifest):
        super().__init__(session, manifest)
        self.spaces = spaces

    def lexical_search(self, query: str, k: int, where: SearchFilter | None = None) -> Ranked:
        """BM25 over FTS5, in this snapshot (joined with the documents `where` allows)."""
        clause = where.clause("sqlite") if where else None
        return fts.bm25_search(self.session.connection(), query, k, clause)

    def lexical_scores(self, query: str, chunk_ids: list[int]) -> dict[int, float]:
        """The BM25 of each of these chunks that holds a query term."""
        return fts.bm25_scores(self.session.connection(), query, chunk_ids)


def local_index_exists(directory: Path) -> bool:
    """Whether the folder holds an index whose creation completed."""
    directory = Path(directory).expanduser().absolute()
    if not is_index(directory):
        return False
    engine = sqlite_engine(directory / DATABASE_FILE, read_only=True)
    try:
        with Session(engine) as session:
            return records.read_manifest(session) is not None
    except DatabaseError:
        return True  # an index, if a damaged one: opening it reports what is wrong
    finally:
        engine.dispose()


def _our_files(directory: Path) -> set[str]:
    ours = {DATABASE_FILE, f"{DATABASE_FILE}-wal", f"{DATABASE_FILE}-shm", LOCK_FILE}
    return ours | {path.name for path, _space, _generation in space_files(directory)}


def check_folder_can_hold_index(directory: Path) -> None:
    """Raise `IndexNotFound` unless a new index may be made here (nothing of the user's lost)."""
    directory = Path(directory).expanduser().absolute()
    if directory.exists() and not directory.is_dir():
        raise IndexNotFound(f"{directory}: is a file, not an index directory")
    if not directory.exists():
        return
    others = [path for path in directory.iterdir() if path.name not in _our_files(directory)]
    if others:
        raise IndexNotFound(
            f"{directory}: the folder is not empty and holds no index; "
            "give a new or empty folder for the index"
        )
    if local_index_exists(directory):
        raise IndexNotFound(f"{directory}: already holds an index")


def _clear_aborted_creation(directory: Path) -> None:
    """Make room for a new index: the folder must be empty but for an aborted creation."""
    if not directory.exists():
        return
    for name in _our_files(directory) - {LOCK_FILE}:
        (directory / name).unlink(missing_ok=True)
