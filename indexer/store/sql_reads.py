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
CHUNK_COLUMNS = (
    "chunks.id", "chunks.document_id", "documents.path", "chunks.ordinal", "chunks.start",
    'chunks."end"', "chunks.text", "documents.host", "chunks.line", "chunks.end_line",
    "chunks.heading", "chunks.page", "documents.metadata_json", "chunks.line_map",
    "chunks.section",
)  # fmt: skip
# A file's content key: the hash of its text, or of its bytes in rows from before 0008.
CONTENT_KEY = "COALESCE(documents.text_sha256, documents.sha256)"
# Read after `CHUNK_COLUMNS` with every chunk: its document's content key, None for a
# record. The keys of a query's hits then need no statement of their own (on PostgreSQL,
# no wait for the server: `SqlReads.content_keys`).
FILE_CONTENT_KEY = f"CASE WHEN documents.metadata_json IS NULL THEN {CONTENT_KEY} END"
CHUNKS = (
    f"SELECT {', '.join(CHUNK_COLUMNS)}, {FILE_CONTENT_KEY} "
    "FROM chunks JOIN documents ON chunks.document_id = documents.id"
)
DOCUMENT = "SELECT id, path, size, mtime_ns, sha256, host, metadata_json FROM documents"


def batches(values: Sequence[Any], size: int = BATCH) -> Iterator[Sequence[Any]]:
    """`values` in slices of at most `size`."""
    for first in range(0, len(values), size):
        yield values[first : first + size]


def among(column: str, values: Sequence[Any], dialect: str, name: str = "i") -> tuple[str, dict]:
    """The condition `column` is one of `values`, and its parameters: one array on
    PostgreSQL (`= ANY`: one statement text whatever the count, so it is prepared and
    planned once; the content keys of 200 candidates as an `IN` list took 3.9 ms a query,
    0.6 ms so), a list of parameters on SQLite."""
    if dialect == "postgresql":
        return f"{column} = ANY(:{name})", {name: list(values)}
    marks = ", ".join(f":{name}{n}" for n in range(len(values)))
    return f"{column} IN ({marks})", {f"{name}{n}": value for n, value in enumerate(values)}


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
        self._manifest = manifest
        self._allowed: dict[SearchFilter, np.ndarray] = {}
        self._content_keys: dict[int, str | None] = {}  # document id -> key (None: a record)

    @property
    def manifest(self) -> Manifest:
        """The manifest of the state this snapshot reads."""
        return self._manifest

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
            return int(self.rows("SELECT count(*) FROM chunks", {})[0][0])
        return len(self.allowed_chunks(where))

    def chunks(self, chunk_ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks with these ids, with their documents' paths; unknown ids left out."""
        found: dict[int, StoredChunk] = {}
        for batch in batches([int(i) for i in chunk_ids]):
            condition, values = among("chunks.id", batch, self.dialect)
            for row in self.rows(f"{CHUNKS} WHERE {condition}", values):
                found[row[0]] = self.chunk_of(row)
        return found

    def chunk_of(self, row: Sequence[Any]) -> StoredChunk:
        """The chunk of a row of `CHUNK_COLUMNS` and `FILE_CONTENT_KEY`; its document's
        content key is kept for `content_keys`."""
        chunk = StoredChunk(*row[:-1])
        self._content_keys[chunk.document_id] = row[-1]
        return chunk

    def content_keys(self, document_ids: Iterable[int]) -> dict[int, str]:
        """The content key of each of these documents that is a file (records left out):
        those of the documents whose chunks this snapshot read already without asking
        the database again."""
        wanted = {int(i) for i in document_ids}
        known = {i: self._content_keys[i] for i in wanted if i in self._content_keys}
        found = {i: key for i, key in known.items() if key is not None}
        for batch in batches(sorted(wanted - known.keys())):
            condition, values = among("documents.id", batch, self.dialect)
            statement = (
                f"SELECT documents.id, {CONTENT_KEY} FROM documents "
                f"WHERE {condition} AND documents.metadata_json IS NULL"
            )
            found.update((int(row[0]), row[1]) for row in self.rows(statement, values))
        return found

    def paths_with_content(
        self, keys: Iterable[str], where: SearchFilter | None = None
    ) -> dict[str, list[tuple[int, str]]]:
        """The files (id, path; in path order) holding each content key, among those
        `where` allows."""
        found: dict[str, list[tuple[int, str]]] = {}
        condition, allowed = where.sql(self.dialect) if where else ("1 = 1", {})
        for batch in batches(sorted(set(keys))):
            by_text, values = among("documents.text_sha256", batch, self.dialect, "k")
            by_bytes, _ = among("documents.sha256", batch, self.dialect, "k")
            values |= allowed
            # Either hash column may hold the key (old rows have only `sha256`); each
            # is indexed, so the OR stays two index lookups.
            statement = (
                f"SELECT {CONTENT_KEY}, documents.id, documents.path FROM documents "
                f"WHERE ({by_text} OR (documents.text_sha256 IS NULL AND {by_bytes})) "
                "AND documents.metadata_json IS NULL "
                f"AND ({condition}) ORDER BY documents.path, documents.id"
            )
            for key, document_id, path in self.rows(statement, values):
                if key in batch:
                    found.setdefault(key, []).append((int(document_id), path))
        return found

    def document(self, document_id: int) -> tuple[StoredDocument, list[StoredChunk]] | None:
        """A document and its chunks in order, or None."""
        found = self.rows(f"{DOCUMENT} WHERE id = :id", {"id": document_id})
        if not found:
            return None
        rows = self.rows(
            f"{CHUNKS} WHERE chunks.document_id = :id ORDER BY chunks.ordinal", {"id": document_id}
        )
        return StoredDocument(*found[0]), [self.chunk_of(row) for row in rows]

    def documents_at(self, path: str) -> list[StoredDocument]:
        """The documents stored at exactly this path, one per host, by id."""
        found = self.rows(f"{DOCUMENT} WHERE path = :path ORDER BY id", {"path": path})
        return [StoredDocument(*row) for row in found]

    def counts(self) -> dict[str, int]:
        """How many documents and chunks there are."""
        return counts(self.rows)

    def has_documents(self, where: SearchFilter) -> bool:
        """Whether any document meets `where` (one row read at most)."""
        condition, values = where.sql(self.dialect)
        return bool(self.rows(f"SELECT 1 FROM documents WHERE {condition} LIMIT 1", values))

    def roots(self) -> list[str]:
        """The folders indexed as roots (every host's), sorted, each once."""
        return [row[0] for row in self.rows("SELECT DISTINCT path FROM roots ORDER BY path", {})]

    def metadata_keys(self) -> list[str]:
        """The metadata keys that records hold, sorted, each once."""
        found = self.rows("SELECT DISTINCT key FROM record_metadata ORDER BY key", {})
        return [row[0] for row in found]

    def metadata_values_ignoring_case(self, key: str, text: str) -> list[str]:
        """The stored value texts of `key` equal to `text` but for case (SQL `lower`:
        ASCII only on SQLite), sorted, each once."""
        found = self.rows(
            "SELECT DISTINCT value FROM record_metadata WHERE key = :key "
            "AND lower(value) = lower(:text) ORDER BY value",
            {"key": key, "text": text},
        )
        return [row[0] for row in found]
