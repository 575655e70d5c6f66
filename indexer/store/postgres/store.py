"""The PostgreSQL store: a whole index in one schema of a database, pgvector for vectors.

A change is one transaction: documents, chunks, their tsvectors and their vectors go in
together, and the commit publishes them (with the manifest's next generation). A crash
rolls it back on the server. A snapshot is one REPEATABLE READ, read-only transaction,
so everything a query reads comes from one committed state (MVCC). One writer at a time
holds the schema's advisory lock.

Documents are keyed by (host, path): each machine indexing into a shared database sees
and removes only its own documents (`$CTXSEARCH_HOST`, else the machine's host name).
"""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, InvalidRequestError
from sqlalchemy.orm import Session

from indexer.config import host_name, postgres_pool
from indexer.errors import IndexClosed, IndexCorrupt, IndexLocked, IndexNotFound, StoreUnavailable
from indexer.faults import kill_point
from indexer.store import writer_rows
from indexer.store.base import (
    ModelText,
    NewDocument,
    RebuildProgress,
    SpaceEncoder,
    StoredDocument,
    VerifyReport,
)
from indexer.store.content_keys import encoding_settings
from indexer.store.describe import describe_tables
from indexer.store.manifest import Manifest
from indexer.store.migrations import migrate, pending
from indexer.store.postgres import fulltext, vectors
from indexer.store.postgres.database import database_errors, first_line, postgres_engine
from indexer.store.postgres.location import PostgresLocation
from indexer.store.postgres.lock import AdvisoryLock
from indexer.store.postgres.parked import ParkedConnections
from indexer.store.postgres.read_transaction import reading
from indexer.store.postgres.snapshot import PostgresSnapshot, SpaceSizes
from indexer.store.postgres.term_counts import defer_term_counts, recount_terms
from indexer.store.row_change import RowChange
from indexer.store.sql_reads import counts, read_manifest
from indexer.store.writer_rows import session_rows

REBUILD_BATCH = 256


class PostgresStore:
    """An index in one schema of a PostgreSQL database with the pgvector extension."""

    def __init__(self, url: str, create: bool = False):
        self.location = PostgresLocation.parse(url)
        self.target = self.location.display
        self.host = host_name()
        self.schema = self.location.schema
        # the connections of ended snapshots, their COMMIT sent (parked.py): half of the
        # $CTXSEARCH_POSTGRES_POOL a store keeps, the engine's pool the other half
        pool = postgres_pool()
        self.parked = ParkedConnections(limit=pool // 2)
        self.engine = postgres_engine(self.location, pooled=pool - pool // 2)
        self._lock: AdvisoryLock | None = None
        self._unfinished: set[Session] = set()  # publishes begun and not ended yet
        self._sizes = SpaceSizes()
        # the manifest last read (on opening, then by each snapshot): what a snapshot's
        # first statements are built from, and sent with its BEGIN
        self._seen: Manifest | None = None
        self._closed = False
        try:
            with database_errors(self.target):
                self._check_vector_extension()
                self.manifest = self._read_manifest() if self._has_schema() else None
                if self.manifest is None and not create:
                    raise IndexNotFound(
                        f"{self.target}: no index here (build one with `ctxsearch index`)"
                    )
                if self.manifest is not None:
                    self._migrate_for_reading()
        except Exception:
            self.engine.dispose()
            raise
        self._seen = self.manifest

    def _check_vector_extension(self) -> None:
        with self.engine.connect() as connection:
            found = connection.execute(
                text("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
            ).first()
        if found is None:
            raise StoreUnavailable(
                f"{self.target}: the database has no `vector` extension: install pgvector on "
                "the server and run `CREATE EXTENSION vector;` in this database"
            )

    def _has_schema(self) -> bool:
        with self.engine.connect() as connection:
            return (
                connection.execute(
                    text("SELECT to_regclass(:t)"), {"t": f'"{self.schema}".manifest'}
                ).scalar()
                is not None
            )

    def _migrate_for_reading(self) -> None:
        """Bring an index made by an older version up to date, so that readers can read
        it: under the writer lock, unless a writer holds it (which migrated it on start)."""
        with self.engine.connect() as connection:
            if not pending(connection):
                return
        try:
            with self.writer(wait=False):
                pass
        except IndexLocked:
            pass

    def _read_manifest(self) -> Manifest | None:
        with self.engine.connect() as connection:
            return read_manifest(session_rows(connection))

    # -- writing -------------------------------------------------------------------------

    @contextmanager
    def writer(self, wait: bool = False) -> Iterator[None]:
        """Hold the schema's advisory lock; create or migrate the schema under it."""
        with (
            database_errors(self.target),
            AdvisoryLock(self.engine, self.schema, self.target).acquire(wait) as lock,
        ):
            self._lock = lock
            try:
                connection = lock.connection
                with connection.begin():
                    connection.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"'))
                    if pending(connection):
                        migrate(connection)
                self.manifest = self._read_manifest()
                yield
            finally:
                # A change whose `with` a signal stopped between its enter and its body
                # is never left: it is rolled back here, on the lock's connection, before
                # the lock is let go, not by the garbage collector after.
                for session in list(self._unfinished):
                    session.info["settled"] = True
                    _roll_back(session)
                    session.close()
                self._lock = None

    def _check_writer(self) -> None:
        if self._lock is None:
            raise RuntimeError("take the writer lock (`with store.writer():`) first")

    @contextmanager
    def _locked_session(self) -> Iterator[Session]:
        """A session on the writer lock's own database session: the lock and the writer's
        transaction end together, so nothing commits once the lock is lost."""
        self._check_writer()
        assert self._lock is not None
        with Session(bind=self._lock.connection) as session:
            yield session

    def initialise(self, manifest: Manifest) -> None:
        """Create the spaces' tables and publish the manifest of a new index."""
        self._check_writer()
        manifest = copy.deepcopy(manifest)
        manifest.created_at = manifest.updated_at = time.time()
        manifest.generation = 0
        manifest.index_id = uuid.uuid4().hex
        manifest.lexical = dict(fulltext.SETTINGS)
        with database_errors(self.target), self._locked_session() as session, session.begin():
            for space in manifest.spaces:
                vectors.create_space(session.connection(), space, manifest.dim_of(space))
            writer_rows.write_manifest(session, manifest)
        self.manifest = manifest

    def documents_under(self, root: Path) -> dict[str, StoredDocument]:
        """This host's documents at `root` (a file root) or under it (not those of roots
        nested in it)."""
        with database_errors(self.target), Session(self.engine) as session:
            return writer_rows.documents_under(session, self.host, root)

    def root_rules(self, root: Path) -> str | None:
        """The rules (JSON) remembered for this host's root `root`, or None."""
        with database_errors(self.target), Session(self.engine) as session:
            return writer_rows.root_rules(session, self.host, root)

    def roots_under(self, root: Path) -> list[str]:
        """This host's roots indexed on their own strictly under `root`."""
        with database_errors(self.target), Session(self.engine) as session:
            return writer_rows.roots_under(session, self.host, root)

    @contextmanager
    def change(self) -> Iterator[PostgresChange]:
        """One transaction for the whole run, committed with the next generation."""
        self._check_writer()
        manifest = self._current_manifest()
        with self._publishing(manifest) as session:
            yield PostgresChange(session, manifest, self.host)

    def rebuild(
        self,
        encode: SpaceEncoder,
        progress: RebuildProgress | None = None,
        model_text: ModelText | None = None,
    ) -> dict[str, int]:
        """Re-encode every stored chunk into emptied spaces, reindex the text, publish."""
        self._check_writer()
        manifest = self._current_manifest()
        with self._publishing(manifest) as session:
            connection = session.connection()
            for space in manifest.spaces:
                vectors.clear(connection, space)
            encoding = encoding_settings(manifest)
            total, done, last = counts(session_rows(session))["chunks"], 0, 0
            while batch := writer_rows.chunk_texts(session, last, REBUILD_BATCH, model_text):
                ids = np.asarray([chunk_id for chunk_id, _ in batch], dtype=np.int64)
                writer_rows.set_content_keys(
                    session, ids.tolist(), [value for _, value in batch], encoding
                )
                encoded = encode([value for _, value in batch])
                for space in manifest.spaces:
                    vectors.add_vectors(connection, space, ids, encoded[space])
                done, last = done + len(batch), int(ids[-1])
                if progress is not None:
                    progress(done, total)
            fulltext.reindex_fulltext(connection)
            manifest.unfilled = []  # every chunk was encoded into every space
            session.info["changed"] = True
        return {"chunks": done, "generation": manifest.generation}

    def _current_manifest(self) -> Manifest:
        if self.manifest is None:
            raise IndexCorrupt(f"{self.target}: the index has no manifest")
        return copy.deepcopy(self.manifest)

    @contextmanager
    def _publishing(self, manifest: Manifest) -> Iterator[Session]:
        """The run's one transaction, on the lock's session, published with the next
        generation. A run that loses the lock raises `IndexLocked` having committed
        nothing; a commit whose answer was lost counts if the database shows it."""
        lock = self._lock
        assert lock is not None
        committing = False
        with database_errors(self.target), self._locked_session() as session:
            session.begin()
            session.info["changed"] = False
            self._unfinished.add(session)
            try:
                yield session
                if not session.info["changed"]:
                    session.rollback()
                    return
                kill_point("before-space-save")
                if session.info.get("recount_terms"):
                    recount_terms(session.connection())
                for space in manifest.spaces:
                    vectors.restructure(
                        session.connection(), space, manifest.index_type, manifest.quantize
                    )
                manifest.generation += 1
                manifest.updated_at = time.time()
                writer_rows.write_manifest(session, manifest)
                lock.confirm(session.connection())
                kill_point("before-publish")
                committing = True
                session.commit()
            except BaseException as error:
                if session.info.get("settled"):  # when the writer lock was let go
                    raise
                _roll_back(session)
                if not lock.lost:
                    raise
                if not (committing and self._published(manifest, error)):
                    raise lock.lost_error(error) from error
            finally:
                self._unfinished.discard(session)
        self.manifest = manifest
        kill_point("after-publish")

    def _published(self, manifest: Manifest, error: BaseException) -> bool:
        """Whether the database holds `manifest` as published (read on another session),
        after `error` took the answer to its commit."""
        try:
            with self.engine.connect() as connection:
                found = read_manifest(session_rows(connection))
        except DBAPIError as unknown:
            raise StoreUnavailable(
                f"{self.target}: the connection was lost while this run committed "
                f"({first_line(error)}) and the database cannot be asked whether the commit "
                f"landed ({first_line(unknown)}): `ctxsearch info` shows the generation, "
                f"{manifest.generation} if it did"
            ) from error
        return found is not None and (found.index_id, found.generation, found.updated_at) == (
            manifest.index_id,
            manifest.generation,
            manifest.updated_at,
        )

    # -- reading -------------------------------------------------------------------------

    @contextmanager
    def snapshot(self, spaces: Iterable[str] | None = None) -> Iterator[PostgresSnapshot]:
        """A read-only REPEATABLE READ transaction: one committed state throughout (every
        space is in the database, so `spaces` changes nothing). It begins with its first
        statement, which a vector search sends in the same round trip as the BEGIN; its
        COMMIT is sent and not waited for (`read_transaction.Reading`, `parked.py`)."""
        if self._closed:
            raise IndexClosed(f"{self.target}: the index was closed")
        with (
            database_errors(self.target),
            reading(self.engine, self.parked, self.target, self._seen) as state,
        ):
            try:
                yield PostgresSnapshot(state, self._sizes)
            finally:
                self._seen = state.manifest or self._seen

    # -- describing, checking ------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """The manifest, the counts, the roots and the size of each table."""
        with self.snapshot() as snapshot:
            tables = ["documents", "chunks"] + [
                vectors.table_name(space) for space in snapshot.manifest.spaces
            ]
            sizes = {
                table: snapshot.rows(
                    "SELECT pg_total_relation_size(CAST(:t AS regclass))", {"t": table}
                )[0][0]
                for table in tables
            }
            return describe_tables(snapshot, self.target, "postgresql+pgvector", sizes)

    def verify(self) -> VerifyReport:
        """Cross-check the rows, every space's vectors and the full-text column, and the
        passages' texts with this host's files."""
        from indexer.store.postgres.verify import verify_snapshot

        return verify_snapshot(self.target, self.snapshot, self.host)

    def close(self) -> None:
        """Release the database connections; the store answers no more."""
        self._closed = True
        self.parked.release()
        self.engine.dispose()


class PostgresChange(RowChange):
    """The writer's view inside `PostgresStore.change()`: rows and vectors, one transaction."""

    def remove_documents(self, document_ids: Iterable[int]) -> int:
        """Remove documents and chunks; their vectors go with them (ON DELETE CASCADE)."""
        return len(self._delete_rows(document_ids))

    def add_documents(self, documents: Sequence[NewDocument]) -> list[list[int]]:
        """Insert documents and chunks, then each chunk's vectors under its new id. Into
        an index with no chunks, the term counts are made once at publish instead of at
        each statement (`term_counts.defer_term_counts`)."""
        if not documents:
            return []
        if "recount_terms" not in self.session.info:
            self.session.info["recount_terms"] = self._holds_no_chunks()
            if self.session.info["recount_terms"]:
                defer_term_counts(self.session.connection())
        stored, ids = self._insert_rows(documents)
        if len(ids):
            for space, (kept, matrix) in self._documents_vectors(ids, documents).items():
                self._add_space_vectors(space, kept, matrix)
        return stored

    def _holds_no_chunks(self) -> bool:
        found = self.session.connection().execute(text("SELECT 1 FROM chunks LIMIT 1"))
        return found.first() is None

    def _drop_vectors(self, chunk_ids: np.ndarray) -> None:
        pass  # gone with their rows (ON DELETE CASCADE)

    def _add_space_vectors(self, space: str, chunk_ids: np.ndarray, matrix: np.ndarray) -> None:
        if len(chunk_ids):
            vectors.add_vectors(self.session.connection(), space, chunk_ids, matrix)

    def _vectors_of(self, space: str, chunk_ids: np.ndarray) -> dict[int, np.ndarray]:
        """The vectors of these chunks in `space`'s table, as this transaction sees it."""
        return vectors.stored_vectors(
            self.session.connection(), space, self.manifest.dim_of(space), chunk_ids.tolist()
        )


def postgres_index_exists(url: str) -> bool:
    """Whether the URL's schema holds an index whose first run published."""
    try:
        store = PostgresStore(url)
    except IndexNotFound:
        return False
    store.close()
    return True


def _roll_back(session: Session) -> None:
    """Roll back a stopped run, unless a signal came inside `commit()` after the server
    committed: then there is nothing to roll back, and the signal is what the caller sees."""
    with suppress(InvalidRequestError):
        session.rollback()
