"""An index directory opened as one object: the SQL store plus its vector spaces."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from indexer.errors import IndexCorrupt, IndexNotFound
from indexer.store.layout import DATABASE_FILE, is_index, space_file
from indexer.store.manifest import Manifest
from indexer.store.metadata import MetadataStore
from indexer.store.vectors import VectorSpace


class StoredIndex:
    """An opened index: its manifest, its metadata store and its vector spaces."""

    def __init__(self, directory: Path, metadata: MetadataStore, manifest: Manifest):
        self.directory = directory
        self.metadata = metadata
        self.manifest = manifest
        self.spaces = {
            name: VectorSpace(space_file(directory, name), manifest.dim) for name in manifest.spaces
        }

    @classmethod
    def open(cls, directory: Path) -> StoredIndex:
        """Open an existing index; raise `IndexNotFound` or `IndexCorrupt` if it is not one."""
        directory = Path(directory).expanduser().absolute()
        if not directory.exists():
            raise IndexNotFound(f"{directory}: no index here (build one with `ctxsearch index`)")
        if not is_index(directory):
            raise IndexNotFound(f"{directory}: not a ctxsearch index")
        metadata = MetadataStore(directory / DATABASE_FILE)
        manifest = metadata.read_manifest()
        if manifest is None:
            metadata.close()
            raise IndexCorrupt(f"{directory}: the index has no manifest")
        return cls(directory, metadata, manifest)

    @classmethod
    def create(cls, directory: Path, manifest: Manifest) -> StoredIndex:
        """Create a new index in a directory that does not exist yet or is empty."""
        directory = Path(directory).expanduser().absolute()
        if directory.exists() and not directory.is_dir():
            raise IndexNotFound(f"{directory}: is a file, not an index directory")
        if directory.exists() and any(directory.iterdir()):
            raise IndexNotFound(
                f"{directory}: the folder is not empty and holds no index; "
                "give a new or empty folder for the index"
            )
        directory.mkdir(parents=True, exist_ok=True)
        metadata = MetadataStore(directory / DATABASE_FILE)
        manifest.created_at = manifest.updated_at = time.time()
        with metadata.transaction() as session:
            metadata.write_manifest(session, manifest)
        index = cls(directory, metadata, manifest)
        index.save()
        return index

    def save(self) -> None:
        """Write every changed vector space atomically."""
        for space in self.spaces.values():
            space.save()

    def close(self) -> None:
        """Release the database."""
        self.metadata.close()

    def reconcile(self) -> dict[str, int]:
        """Make the vector spaces and the SQL store agree after an interrupted run.

        Vectors whose chunk is gone are removed. Documents with a chunk missing from any
        space are deleted from SQL, so that the next run indexes them again.
        """
        chunk_ids = self.metadata.chunk_ids()
        stale_vectors = 0
        incomplete_chunks: set[int] = set()
        for space in self.spaces.values():
            space_ids = set(space.ids().tolist())
            stale = np.fromiter(space_ids - chunk_ids, dtype=np.int64)
            stale_vectors += space.remove(stale)
            incomplete_chunks |= chunk_ids - space_ids
        documents = self.metadata.documents_of_chunks(incomplete_chunks)
        if documents:
            with self.metadata.transaction() as session:
                orphaned = self.metadata.delete_documents(session, documents)
            for space in self.spaces.values():
                space.remove(np.asarray(orphaned, dtype=np.int64))
        self.save()
        return {"stale_vectors": stale_vectors, "incomplete_documents": len(documents)}
