"""What a snapshot reads from the SQL tables, written once as SQL text for every backend.

The folder store runs these statements through the standard library's sqlite3 (no
SQLAlchemy on the read path: `ctxsearch query` is a whole process per query), PostgreSQL
through SQLAlchemy's `text()`; both take `:name` parameters. A snapshot hands its
statements to its `rows` function, so the manifest, the hydration of hits, the counts and
the chunks a filter allows are read the same way from every store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from indexer.store.base import StoredChunk, StoredDocument, VerifyReport
from indexer.store.manifest import Manifest

if TYPE_CHECKING:
    from indexer.store.filters import SearchFilter

# Runs one statement with named parameters in the snapshot's transaction: its rows.
Rows = Callable[[str, Mapping[str, Any]], Sequence[Sequence[Any]]]

BATCH = 500  # ids per statement
# The columns of `StoredChunk`, in its order, and of `StoredDocument`.
CHUNKS = (
    "SELECT chunks.id, chunks.document_id, documents.path, chunks.ordinal, chunks.start, "
    'chunks."end", chunks.text, documents.host, chunks.line, chunks.end_line, '
    "chunks.heading, chunks.page, documents.metadata_json, chunks.section "
    "FROM chunks JOIN documents ON chunks.document_id = documents.id"
)
DOCUMENT = "SELECT id, path, size, mtime_ns, sha256, host, metadata_json FROM documents"


def batches(values: Sequence[Any], size: int = BATCH) -> Iterator[Sequence[Any]]:
    """`values` in slices of at most `size`."""
    for first in range(0, len(values), size):
        yield values[first : first + size]


def id_list(ids: Sequence[int]) -> tuple[str, dict[str, int]]:
    """`(:i0, :i1, ...)` and its values: a list of ids as parameters of one statement."""
    values = {f"i{n}": int(chunk_id) for n, chunk_id in enumerate(ids)}
    return "(" + ", ".join(f":{name}" for name in values) + ")", values


def allowed_chunks_sql(condition: str) -> str:
    """The ids of the chunks whose documents meet `condition` (`SearchFilter.sql`), in order."""
    return (
        "SELECT chunks.id FROM chunks JOIN documents ON chunks.document_id = documents.id "
        f"WHERE {condition} ORDER BY chunks.id"
    )


def read_manifest(rows: Rows) -> Manifest | None:
    """The stored manifest, or None in a database that has none yet."""
    found = {key: value for key, value in rows("SELECT key, value FROM manifest", {})}
    return Manifest.from_rows(found) if found else None


def counts(rows: Rows) -> dict[str, int]:
    """How many documents and chunks there are."""
    return {
        table: int(rows(f"SELECT count(*) FROM {table}", {})[0][0])
        for table in ("documents", "chunks")
    }


def check_offsets(rows: Rows, report: VerifyReport) -> None:
    """`verify`: name the chunks whose character offsets cannot be (every backend)."""
    [(bad,)] = rows('SELECT count(*) FROM chunks WHERE start < 0 OR "end" < start', {})
    if bad:
        report.problems.append(f"{bad} chunks with invalid offsets")


class SqlReads:
    """The part of a snapshot every SQL backend shares: its manifest, and the hydration of
    hits, the counts and the chunks a filter allows, read by `rows` (statements in the
    snapshot's transaction) in `dialect` (`sqlite` or `postgresql`)."""

    def __init__(self, rows: Rows, dialect: str, manifest: Manifest):
        self.rows = rows
        self.dialect = dialect
        self.manifest = manifest
        self._allowed: dict[SearchFilter, np.ndarray] = {}

    def allowed_chunks(self, where: SearchFilter) -> np.ndarray:
        """The ids of the chunks of the documents `where` allows (sorted; once per snapshot)."""
        if where not in self._allowed:
            condition, values = where.sql(self.dialect)
            found = self.rows(allowed_chunks_sql(condition), values)
            self._allowed[where] = np.fromiter((row[0] for row in found), np.int64, len(found))
        return self._allowed[where]

    def chunk_count(self, where: SearchFilter | None = None) -> int:
        """How many chunks there are, or how many `where` allows."""
        if not where:
            return self.counts()["chunks"]
        return len(self.allowed_chunks(where))

    def chunks(self, chunk_ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks with these ids, with their documents' paths; unknown ids left out."""
        found: dict[int, StoredChunk] = {}
        for batch in batches(list(chunk_ids)):
            marks, values = id_list(batch)
            for row in self.rows(f"{CHUNKS} WHERE chunks.id IN {marks}", values):
                found[row[0]] = StoredChunk(*row)
        return found

    def document(self, document_id: int) -> tuple[StoredDocument, list[StoredChunk]] | None:
        """A document and its chunks in order, or None."""
        found = self.rows(f"{DOCUMENT} WHERE id = :id", {"id": document_id})
        if not found:
            return None
        rows = self.rows(
            f"{CHUNKS} WHERE chunks.document_id = :id ORDER BY chunks.ordinal", {"id": document_id}
        )
        return StoredDocument(*found[0]), [StoredChunk(*row) for row in rows]

    def counts(self) -> dict[str, int]:
        """How many documents and chunks there are."""
        return counts(self.rows)
