"""The row side of a change, the same on every SQL backend.

A backend's change subclasses `RowChange` and adds what it does with the vectors of the
rows it inserts and deletes, and how it reads the vectors of chunks (`_vectors_of`), by
which `vectors_for` finds vectors to reuse. (A snapshot's rows: `sql_reads.py`.)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from indexer.reading.sources import Document
from indexer.records.record import RECORD_PREFIX, record_path
from indexer.spaces import CONTEXTUAL
from indexer.store import writer_rows
from indexer.store.base import KeyedVectors, NewDocument, StoredRecord
from indexer.store.chunk_ranges import filled_through, with_ids
from indexer.store.content_keys import encoding_settings
from indexer.store.manifest import Manifest
from indexer.store.replace_rows import replace_document_rows
from indexer.store.unfilled import filled_with_keys, next_unfilled, unfilled_count

# How many content keys of removed chunks a change keeps the vectors of, for reuse later
# in the change (an edited file's old passages are looked up before their removal; this
# serves the passages that turn up in a later batch). About 3 KB each with two spaces.
REMEMBERED_REMOVALS = 20_000


class RowChange:
    """Documents, chunks, mtimes and roots, written in the caller's transaction."""

    def __init__(self, session: Session, manifest: Manifest, host: str):
        self.session = session
        self.manifest = manifest
        self.host = host
        self._removed: KeyedVectors = {}

    def _changed(self) -> None:
        self.session.info["changed"] = True  # the store publishes only what changed

    def _delete_rows(self, document_ids: Iterable[int]) -> np.ndarray:
        """Delete documents and their chunks; the ids of the chunks deleted."""
        document_ids = list(document_ids)
        if not document_ids:
            return np.zeros(0, np.int64)
        self._changed()
        self._remember_removed(document_ids)
        return np.asarray(writer_rows.delete_documents(self.session, document_ids), np.int64)

    def _remember_removed(self, document_ids: list[int]) -> None:
        """Keep the vectors of the keyed chunks of documents about to be removed (up to
        `REMEMBERED_REMOVALS` keys), so that `vectors_for` still finds them."""
        room = REMEMBERED_REMOVALS - len(self._removed)
        if room <= 0:
            return
        keyed = [
            (chunk_id, key)
            for chunk_id, key in writer_rows.keyed_chunks(self.session, document_ids)
            if key not in self._removed
        ][:room]
        if keyed:
            self._removed.update(self._keyed_vectors(keyed))

    def vectors_for(
        self, content_keys: Iterable[str], spaces: Sequence[str] | None = None
    ) -> KeyedVectors:
        """The vectors, in every space (or in `spaces`), of these content keys that a chunk
        has (or a chunk removed earlier in this change had); keys no chunk has are left out."""
        keys = list(dict.fromkeys(content_keys))
        found = self._keyed_vectors(
            [
                (chunk_id, key)
                for key, chunk_id in writer_rows.chunks_with_keys(self.session, keys).items()
            ],
            spaces,
        )
        found.update(
            {key: self._removed[key] for key in keys if key not in found and key in self._removed}
        )
        return found

    def _keyed_vectors(
        self, keyed: list[tuple[int, str]], spaces: Sequence[str] | None = None
    ) -> KeyedVectors:
        """Each key's vectors in every space (or in `spaces`), read from its chunk (those
        whose vector a space lacks, its contextual one not filled yet, are left out)."""
        if not keyed:
            return {}
        ids = np.asarray([chunk_id for chunk_id, _ in keyed], np.int64)
        wanted = self.manifest.spaces if spaces is None else spaces
        by_space = {space: self._vectors_of(space, ids) for space in wanted}
        return {
            key: {space: found[chunk_id] for space, found in by_space.items()}
            for chunk_id, key in keyed
            if all(chunk_id in found for found in by_space.values())
        }

    def _vectors_of(self, space: str, chunk_ids: np.ndarray) -> dict[int, np.ndarray]:
        """The stored vector of each of these chunks in `space` (the backend's own)."""
        raise NotImplementedError

    def replace_document(self, document_id: int, new: NewDocument) -> list[int]:
        """Make the stored file document `document_id` (at `new`'s path) hold `new`,
        keeping the rows, ids, vectors and lexical entries of its passages whose text is
        unchanged (`indexer.store.replace_rows`); each new chunk's id, in order."""
        self._changed()
        self._remember_removed([document_id])
        replaced = replace_document_rows(
            self.session, document_id, new.document, new.chunks, encoding_settings(self.manifest)
        )
        self._drop_vectors(np.asarray(replaced.deleted, np.int64))
        if replaced.inserted:
            ids = np.asarray([replaced.ids[position] for position in replaced.inserted], np.int64)
            rows = np.asarray(replaced.inserted, np.int64)
            vectors = {space: matrix[rows] for space, matrix in new.vectors.items()}
            unfilled = None if new.unfilled is None else new.unfilled[rows]
            for space, (kept, matrix) in self._vectors_to_add(ids, vectors, unfilled).items():
                self._add_space_vectors(space, kept, matrix)
        return replaced.ids

    def _vectors_to_add(
        self, chunk_ids: np.ndarray, vectors: dict[str, np.ndarray], unfilled: np.ndarray | None
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Each space's (ids, vectors) to add for these new chunks: all of them, but in
        the contextual space those `unfilled` marks, recorded for the fill instead
        (`unfilled_chunks`)."""
        added = {space: (chunk_ids, vectors[space]) for space in self.manifest.spaces}
        if unfilled is not None and CONTEXTUAL in added:
            self.manifest.unfilled = with_ids(self.manifest.unfilled, chunk_ids[unfilled].tolist())
            added[CONTEXTUAL] = (chunk_ids[~unfilled], vectors[CONTEXTUAL][~unfilled])
        return added

    def _documents_vectors(
        self, chunk_ids: np.ndarray, documents: Sequence[NewDocument]
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """`_vectors_to_add` for the chunks of these documents, inserted as `chunk_ids`."""
        vectors = {
            space: np.concatenate([item.vectors[space] for item in documents])
            for space in self.manifest.spaces
        }
        unfilled = None
        if any(item.unfilled is not None for item in documents):
            unfilled = np.concatenate(
                [
                    np.zeros(len(item.chunks), bool) if item.unfilled is None else item.unfilled
                    for item in documents
                ]
            )
        return self._vectors_to_add(chunk_ids, vectors, unfilled)

    def unfilled_chunks(self, limit: int) -> list[tuple[int, str, str | None]]:
        """The (id, text, section trail) of the `limit` lowest chunks whose contextual
        vector is not stored yet."""
        rows = writer_rows.session_rows(self.session)
        return next_unfilled(rows, self.manifest.unfilled, limit)

    def fill_contextual(self, chunk_ids: np.ndarray, vectors: np.ndarray) -> None:
        """Store the contextual vectors of the lowest unfilled chunks (`unfilled_chunks`);
        none given: no chunk is left unfilled, and the ranges naming removed ones go."""
        if not self.manifest.unfilled:
            return
        self._changed()
        if not len(chunk_ids):
            self.manifest.unfilled = []
            return
        chunk_ids = np.asarray(chunk_ids, np.int64)
        self._add_space_vectors(CONTEXTUAL, chunk_ids, vectors)
        left = filled_through(self.manifest.unfilled, int(chunk_ids.max()))
        rows = writer_rows.session_rows(self.session)
        self.manifest.unfilled = left if next_unfilled(rows, left, 1) else []

    def filled_vectors_for(self, content_keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The contextual vector of each of these content keys that a chunk holding one
        has (the fill copies it instead of encoding the text again)."""
        rows = writer_rows.session_rows(self.session)
        dialect = self.session.get_bind().dialect.name
        keys = list(dict.fromkeys(content_keys))
        found = filled_with_keys(rows, self.manifest.unfilled, keys, dialect)
        if not found:
            return {}
        vectors = self._vectors_of(CONTEXTUAL, np.asarray(list(found.values()), np.int64))
        return {key: vectors[i] for key, i in found.items() if i in vectors}

    def unfilled_count(self) -> int:
        """How many chunks lack their contextual vector."""
        return unfilled_count(writer_rows.session_rows(self.session), self.manifest.unfilled)

    def _drop_vectors(self, chunk_ids: np.ndarray) -> None:
        """Remove these deleted chunks' vectors from every space (the backend's own)."""
        raise NotImplementedError

    def _add_space_vectors(self, space: str, chunk_ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add these chunks' vectors to one space (the backend's own)."""
        raise NotImplementedError

    def _insert_rows(self, documents: Sequence[NewDocument]) -> tuple[list[list[int]], np.ndarray]:
        """Insert documents and chunks; each one's chunk ids, and all of them in order."""
        stored = writer_rows.add_documents(
            self.session,
            self.host,
            [(item.document, item.chunks, item.metadata) for item in documents],
            encoding_settings(self.manifest),
        )
        self._changed()
        ids = [chunk_id for chunk_ids in stored for chunk_id in chunk_ids]
        return stored, np.asarray(ids, np.int64)

    def touch_document(self, document_id: int, document: Document) -> None:
        """Record the new mtime, ctime and inode of an unchanged document."""
        writer_rows.touch_document(self.session, document_id, document)
        self._changed()

    def move_document(self, document_id: int, document: Document) -> None:
        """Give an unchanged document its new path; its chunks and vectors stay as they are."""
        writer_rows.move_document(self.session, document_id, document)
        self._changed()

    def record_root(self, root: Path, rules: str | None = None) -> None:
        """Remember `root` as indexed on its own by this host (with its rules, as JSON)."""
        if writer_rows.record_root(self.session, self.host, root, rules):
            self._changed()

    def forget_root(self, root: Path | str) -> None:
        """Forget this host's root at `root` and its rules; its documents stay."""
        if writer_rows.forget_root(self.session, self.host, root):
            self._changed()

    def remove_path(self, path: Path) -> tuple[int, int, int]:
        """Remove this host's documents at `path` (a file) or under it (a folder) from
        every space, and forget the roots there; (documents, chunks, roots) removed."""
        document_ids = writer_rows.documents_at(self.session, self.host, path)
        chunks = self.remove_documents(document_ids) if document_ids else 0  # type: ignore[attr-defined]
        roots = writer_rows.forget_roots(self.session, self.host, path)
        if roots:
            self._changed()
        return len(document_ids), chunks, roots

    def find_records(self, record_ids: Iterable[str]) -> dict[str, StoredRecord]:
        """The stored records among these ids, by id."""
        found = writer_rows.find_records(self.session, [record_path(i) for i in record_ids])
        return {path[len(RECORD_PREFIX) :]: record for path, record in found.items()}

    def set_record_metadata(self, document_id: int, metadata: dict[str, Any]) -> None:
        """Replace a record's metadata (its text, chunks and vectors stay)."""
        writer_rows.set_record_metadata(self.session, document_id, metadata)
        self._changed()

    def set_index_type(self, index_type: str) -> None:
        """Switch the vector structure (exact or HNSW) from this change on."""
        if index_type != self.manifest.index_type:
            self.manifest.index_type = index_type
            self._changed()

    def set_quantize(self, quantize: str) -> None:
        """Switch how the vector spaces are quantized from this change on (the spaces are
        rebuilt from their float32 vectors when this change publishes)."""
        if quantize != self.manifest.quantize:
            self.manifest.quantize = quantize
            self._changed()

    def set_precision(self, precision: str) -> None:
        """Record the precision (fp32 or bf16) chunks are encoded in from this change on."""
        if precision != self.manifest.precision:
            self.manifest.precision = precision
            self._changed()
