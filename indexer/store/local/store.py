"""The embedded store: an index folder holding a SQLite database and FAISS files.

One read path, for every reader (a `ctxsearch query` process, the HTTP server's threads,
the writer's own counts): a snapshot is one read transaction on a sqlite3 connection of
the pool (`connections.py`), plus the spaces of the generation it sees, loaded when a
snapshot first asks for them and shared by every reader of that generation, so readers
see the old state or the new one, never a mix. Each is a base with the deltas since
laid over it (`layered.py`): a newer generation reads only its new deltas, and keeps the
base (the same object) until a merge names another. A writer publishes through
`FolderWriter` (`writing.py`, SQLAlchemy), made on the first write: opening an index to
read imports neither SQLAlchemy nor FAISS, and loads only the spaces a query searches.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.errors import (
    IndexClosed,
    IndexCorrupt,
    IndexNotFound,
    SpaceFileMissing,
    StoreWriteFailed,
)
from indexer.store.base import (
    ModelText,
    RebuildProgress,
    SpaceEncoder,
    StoredDocument,
    VerifyReport,
)
from indexer.store.describe import describe_tables
from indexer.store.local.connections import ReadConnections, sqlite_rows
from indexer.store.local.folder import check_can_hold_index, clear_aborted_creation
from indexer.store.local.index_files import DATABASE_FILE, check_is_index, file_identity, is_index
from indexer.store.local.segments import Segments, named_files
from indexer.store.local.snapshot import LocalSnapshot
from indexer.store.local.sqlite_errors import is_read_only_error
from indexer.store.manifest import Manifest
from indexer.store.migrations import missing
from indexer.store.sql_reads import read_manifest

if TYPE_CHECKING:
    from indexer.store.local.layered import LayeredSpace
    from indexer.store.local.writing import FolderWriter, LocalChange

_OPEN_ATTEMPTS = 20


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
            check_can_hold_index(self.directory)
            clear_aborted_creation(self.directory)
            self.directory.mkdir(parents=True, exist_ok=True)
        self._asked_read_only = read_only
        self._reads = ReadConnections(self.database, self.target, immutable=read_only)
        self._writes: FolderWriter | None = None
        # The spaces readers share: each space's newest loaded so far, by the (index id,
        # generation) it is of.
        self._spaces: dict[str, tuple[tuple[str, int], LayeredSpace]] = {}
        self._loading = threading.RLock()
        self._closed = False
        try:
            self._open()
            if self.manifest is None and not create:
                raise IndexCorrupt(
                    f"{self.directory}: the index has no manifest (its first run was "
                    "interrupted: run `ctxsearch index` again)"
                )
        except BaseException:
            self.close()
            raise

    @property
    def read_only(self) -> bool:
        """Whether the index is read as it is, never written (a read-only folder or mount)."""
        return self._asked_read_only or self._reads.immutable

    def _open(self) -> None:
        """Bring the schema up to date where the database can be written (making a new
        index's file), remember which file it is, and read its manifest."""
        if not self.database.exists() or (self._missing_migrations() and not self.read_only):
            try:
                self._writer().migrate()
            except StoreWriteFailed as error:
                if not self.database.exists() or not is_read_only_error(error.__cause__ or error):
                    raise
                self._asked_read_only = True  # a read-only folder or mount: read as is
        self._identity = file_identity(self.database)
        self.manifest = self.read_manifest()

    def _missing_migrations(self) -> list[str]:
        with self._reads.transaction() as connection:
            rows = sqlite_rows(connection, self.target)
            if not rows("SELECT 1 FROM sqlite_master WHERE name = 'migrations'", {}):
                return missing(set())  # a database from before migrations were recorded
            return missing({name for (name,) in rows("SELECT name FROM migrations", {})})

    def read_manifest(self) -> Manifest | None:
        """The manifest the database publishes now."""
        with self._reads.transaction() as connection:
            return read_manifest(sqlite_rows(connection, self.target))

    def _writer(self) -> FolderWriter:
        with self._loading:
            if self._writes is None:
                from indexer.store.local.writing import FolderWriter

                self._writes = FolderWriter(self)
            return self._writes

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
            if identity == self._identity:
                return
            self._reads.close()
            if self._writes is not None:
                self._writes.dispose()
            self._reads = ReadConnections(self.database, self.target, self._asked_read_only)
            self._writes, self._spaces = None, {}
            self._open()

    # -- writing (through `FolderWriter`) ------------------------------------------------

    @contextmanager
    def writer(self, wait: bool = False) -> Iterator[None]:
        """Hold the folder's writer lock (flock on `write.lock`) for the block."""
        if self.read_only:
            raise StoreWriteFailed(f"{self.directory}: the index is read-only here")
        with self._writer().writer(wait):
            yield

    def initialise(self, manifest: Manifest) -> None:
        """Publish the manifest and the empty generation-0 spaces of a new index."""
        self._writer().initialise(manifest)

    def documents_under(self, root: Path) -> dict[str, StoredDocument]:
        """This machine's documents at `root` (a file root) or under it (not those of
        roots nested in it)."""
        return self._writer().documents_under(root)

    def root_rules(self, root: Path) -> str | None:
        """The rules (JSON) remembered for this host's root `root`, or None."""
        return self._writer().root_rules(root)

    def roots_under(self, root: Path) -> list[str]:
        """The roots indexed on their own strictly under `root`."""
        return self._writer().roots_under(root)

    @contextmanager
    def change(self) -> Iterator[LocalChange]:
        """A change of SQL and of in-memory copies of the spaces, published on leaving."""
        with self._writer().change() as change:
            yield change

    def rebuild(
        self,
        encode: SpaceEncoder,
        progress: RebuildProgress | None = None,
        model_text: ModelText | None = None,
    ) -> dict[str, int]:
        """Re-encode every stored chunk into new spaces, rebuild FTS5, publish."""
        return self._writer().rebuild(encode, progress, model_text)

    def merge_segments(self) -> dict[str, int]:
        """Merge every space's delta segments into a new base, published as the next
        generation (writer only; a run also merges when deltas pile up)."""
        return self._writer().merge()

    def sweep(self) -> None:
        """Delete the space files the published manifest does not name (writer only)."""
        self._writer().sweep()

    # -- reading -------------------------------------------------------------------------

    @contextmanager
    def snapshot(self, spaces: Iterable[str] | None = None) -> Iterator[LocalSnapshot]:
        """A read transaction and the spaces of the generation it sees: `spaces` (default:
        all of them), each loaded once per generation and shared by every reader."""
        self._follow_replacement()
        for attempt in range(1, _OPEN_ATTEMPTS + 1):
            with self._reads.transaction() as connection:
                manifest = read_manifest(sqlite_rows(connection, self.target))  # starts reading
                if manifest is None:
                    raise IndexCorrupt(f"{self.directory}: the index has no manifest")
                try:
                    loaded = self._spaces_for_reading(manifest, spaces)
                except SpaceFileMissing:
                    if attempt == _OPEN_ATTEMPTS:
                        raise  # not a writer's sweep: the file is gone
                    continue  # a writer published and swept this generation: read again
                yield LocalSnapshot(connection, self.target, loaded, manifest)
                return

    def _spaces_for_reading(
        self, manifest: Manifest, names: Iterable[str] | None
    ) -> dict[str, LayeredSpace]:
        """The asked-for spaces of the manifest's generation, loaded once, shared."""
        wanted = manifest.spaces if names is None else list(names)
        with self._loading:
            for name, (state, space) in list(self._spaces.items()):
                if state[1] < manifest.generation and not space.has_base_of(
                    Segments.of(manifest, name)
                ):
                    del self._spaces[name]  # merged since: its base is not kept for nothing
            return {name: self._space_of(manifest, name) for name in wanted}

    def _space_of(self, manifest: Manifest, name: str) -> LayeredSpace:
        """The space `name` of the manifest's generation: the one loaded, or the newest
        loaded one followed to it (its new deltas read)."""
        from indexer.store.local.layered import read_space  # FAISS, when needed

        state = (manifest.index_id, manifest.generation)
        known_state, known = self._spaces.get(name, (("", -1), None))
        if known_state == state and known is not None:
            return known
        same_index = known_state[0] == state[0]
        previous = known if same_index and known_state[1] < state[1] else None
        space = read_space(
            self.directory, name, manifest.dim_of(name), Segments.of(manifest, name), previous
        )
        if known is None or previous is not None or not same_index:
            self._spaces[name] = (state, space)  # (not for a reader of an older generation)
        return space

    # -- describing, checking ------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """The manifest, the counts, the roots, and the size of each file."""
        with self.snapshot([]) as snapshot:
            files = [self.database, *sorted(named_files(self.directory, snapshot.manifest))]
            sizes = {path.name: (path.stat().st_size if path.exists() else None) for path in files}
            return describe_tables(snapshot, self.target, "sqlite+faiss", sizes)

    def verify(self) -> VerifyReport:
        """Cross-check SQLite, every FAISS space and the FTS5 space, and the passages'
        texts with their files'."""
        from indexer.store.local.verify import verify_folder

        return verify_folder(self.directory, self.snapshot, self.host)

    def close(self) -> None:
        """Release the database and the loaded spaces; the store answers no more."""
        self._closed = True
        self._spaces = {}
        self._reads.close()
        if self._writes is not None:
            self._writes.dispose()
