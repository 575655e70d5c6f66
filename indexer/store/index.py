"""An index directory opened as one object: the SQL store plus its vector spaces.

Every change is published atomically. A writer changes SQL inside one transaction and
the vector spaces in memory, saves the spaces as the next generation's files, then
commits the new generation number with the rest: the commit is the instant the new
state appears. A crash before it leaves the old state whole (SQLite rolls back, the
new files are ignored and swept); a crash after it leaves the new state whole.
Readers load the generation the manifest names and hydrate hits in a snapshot of that
same generation, so they see the old state or the new one, never a mix.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.orm import Session

from indexer.errors import IndexCorrupt, IndexNotFound
from indexer.faults import kill_point
from indexer.store.layout import DATABASE_FILE, LOCK_FILE, is_index, space_file, space_files
from indexer.store.manifest import Manifest
from indexer.store.metadata import MetadataStore
from indexer.store.vectors import VectorSpace

_OPEN_ATTEMPTS = 5


class NothingToPublish(Exception):
    """Raised inside `StoredIndex.writing()` to leave it without publishing anything."""


class StoredIndex:
    """An opened index: its manifest, its metadata store and its vector spaces."""

    def __init__(
        self,
        directory: Path,
        metadata: MetadataStore,
        manifest: Manifest,
        load_spaces: bool = True,
    ):
        self.directory = directory
        self.metadata = metadata
        self.manifest = manifest
        self.spaces = (
            self._load_spaces(manifest)
            if load_spaces
            else {name: VectorSpace(manifest.dim) for name in manifest.spaces}
        )

    def _load_spaces(self, manifest: Manifest) -> dict[str, VectorSpace]:
        return {
            name: VectorSpace(manifest.dim, space_file(self.directory, name, manifest.generation))
            for name in manifest.spaces
        }

    @classmethod
    def open(cls, directory: Path, load_spaces: bool = True) -> StoredIndex:
        """Open an existing index; raise `IndexNotFound` or `IndexCorrupt` if it is not one.

        Without `load_spaces` the vector spaces start empty (for rebuilding them).
        """
        directory = Path(directory).expanduser().absolute()
        if not directory.exists():
            raise IndexNotFound(f"{directory}: no index here (build one with `ctxsearch index`)")
        if not directory.is_dir() or not is_index(directory):
            raise IndexNotFound(f"{directory}: not a ctxsearch index")
        metadata = MetadataStore(directory / DATABASE_FILE)
        try:
            manifest = metadata.read_manifest()
            if manifest is None:
                raise IndexCorrupt(
                    f"{directory}: the index has no manifest (its first run was "
                    "interrupted: run `ctxsearch index` again)"
                )
            index = cls(directory, metadata, manifest, load_spaces=False)
            if load_spaces:
                index._load_published()
            return index
        except Exception:
            metadata.close()
            raise

    @classmethod
    def create(cls, directory: Path, manifest: Manifest) -> StoredIndex:
        """Create a new index in a directory that is new, empty, or an aborted creation."""
        directory = Path(directory).expanduser().absolute()
        if directory.exists() and not directory.is_dir():
            raise IndexNotFound(f"{directory}: is a file, not an index directory")
        if directory.exists():
            _clear_aborted_creation(directory)
        directory.mkdir(parents=True, exist_ok=True)
        metadata = MetadataStore(directory / DATABASE_FILE)
        manifest.created_at = manifest.updated_at = time.time()
        manifest.generation = 0
        for name in manifest.spaces:
            VectorSpace(manifest.dim).save_to(space_file(directory, name, 0))
        with metadata.transaction() as session:
            metadata.write_manifest(session, manifest)
        return cls(directory, metadata, manifest)

    def close(self) -> None:
        """Release the database."""
        self.metadata.close()

    def refresh(self) -> bool:
        """Load the newest published generation if a writer published one; say if it did."""
        if self.metadata.current_generation() == self.manifest.generation:
            return False
        self._load_published()
        return True

    def _load_published(self) -> None:
        """Load the manifest and spaces of the published generation.

        A writer may publish (and sweep the files we were about to read) meanwhile: then
        the manifest is read again.
        """
        for _attempt in range(_OPEN_ATTEMPTS):
            manifest = self.metadata.read_manifest()
            if manifest is None:
                raise IndexCorrupt(f"{self.directory}: the index has no manifest")
            try:
                self.spaces = self._load_spaces(manifest)
            except FileNotFoundError:
                continue
            self.manifest = manifest
            return
        raise IndexCorrupt(f"{self.directory}: a vector space file of the index is missing")

    @contextmanager
    def writing(self) -> Iterator[Session]:
        """A transaction whose changes, with the spaces' in-memory changes, publish at once.

        The caller holds the writer lock, changes SQL through the session and the spaces
        in memory; leaving the block saves the spaces as the next generation and commits.
        Raising `NothingToPublish` in the block rolls back instead, and publishes nothing.
        """
        self.sweep()
        next_generation = self.manifest.generation + 1
        try:
            with self.metadata.transaction() as session:
                yield session
                kill_point("before-space-save")
                for name, space in self.spaces.items():
                    space.restructure(self.manifest.index_type)
                    space.save_to(space_file(self.directory, name, next_generation))
                self.manifest.generation = next_generation
                self.manifest.updated_at = time.time()
                self.metadata.write_manifest(session, self.manifest)
                kill_point("before-publish")
        except NothingToPublish:
            self.manifest.generation = next_generation - 1
            return
        except BaseException:
            self.manifest.generation = next_generation - 1
            self.sweep()
            raise
        kill_point("after-publish")
        self.sweep()

    def sweep(self) -> None:
        """Delete space files of other generations than the published one (writer only)."""
        for path, _space, generation in space_files(self.directory):
            if generation != self.manifest.generation:
                path.unlink(missing_ok=True)
        for leftover in self.directory.glob(".*.faiss.tmp-*"):
            leftover.unlink(missing_ok=True)


def has_manifest(directory: Path) -> bool:
    """Whether the directory holds an index whose creation completed."""
    if not is_index(directory):
        return False
    store = MetadataStore(Path(directory) / DATABASE_FILE)
    try:
        return store.read_manifest() is not None
    finally:
        store.close()


def _our_files(directory: Path) -> set[str]:
    ours = {DATABASE_FILE, f"{DATABASE_FILE}-wal", f"{DATABASE_FILE}-shm", LOCK_FILE}
    return ours | {path.name for path, _space, _generation in space_files(directory)}


def check_can_create(directory: Path) -> None:
    """Raise `IndexNotFound` unless a new index may be made here (nothing of the user's lost)."""
    directory = Path(directory)
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
    if has_manifest(directory):
        raise IndexNotFound(f"{directory}: already holds an index")


def _clear_aborted_creation(directory: Path) -> None:
    """Make room for a new index: the folder must be empty but for an aborted creation."""
    check_can_create(directory)
    for name in _our_files(directory) - {LOCK_FILE}:
        (directory / name).unlink(missing_ok=True)
    for path, _space, _generation in space_files(directory):
        path.unlink(missing_ok=True)
