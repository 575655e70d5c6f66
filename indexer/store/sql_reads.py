"""What a snapshot reads from the SQL tables, written once as SQL text for every backend.

The folder store runs these statements through the standard library's sqlite3 (no
SQLAlchemy on the read path: `ctxsearch query` is a whole process per query), PostgreSQL
through SQLAlchemy's `text()`; both take `:name` parameters. A snapshot hands its
statements to its `rows` function (one statement) or its `batch` function (several, sent
together where the store can), so the manifest, the candidates' rows, what hits show, the
counts and the chunks a filter allows are read the same way from every store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from indexer.store.base import (
    Copies,
    ShownHits,
    StoredChunk,
    StoredDocument,
    TermEvidence,
    VerifyReport,
)
from indexer.store.chunk_ranges import in_ranges
from indexer.store.completeness import Completeness
from indexer.store.manifest import Manifest

if TYPE_CHECKING:
    from indexer.store.filters import SearchFilter
    from indexer.store.word_filter import WordFilter

# Runs one statement with named parameters in the snapshot's transaction: its rows.
Rows = Callable[[str, Mapping[str, Any]], Sequence[Sequence[Any]]]
# A statement with named parameters, and its values.
Statement = tuple[str, Mapping[str, Any]]
# How a store reads the query terms' evidence: its statements, and what makes the terms'
# counts and each term's holders of the answers (one list of rows per statement).
TermReads = tuple[
    list[Statement],
    Callable[[list[Sequence[Sequence[Any]]]], tuple[dict[str, int], dict[str, set[int]]]],
]

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
# Read after `CHUNK_COLUMNS` with a search's candidates: its document's content key and
# how many passages it holds (`FILE_PASSAGES`), both None for a record (`CandidateRows`).
FILE_CONTENT_KEY = f"CASE WHEN documents.metadata_json IS NULL THEN {CONTENT_KEY} END"
CANDIDATE_COLUMNS = f"{', '.join(CHUNK_COLUMNS)}, {FILE_CONTENT_KEY}, files.passages"
# Joined after `documents` to a statement reading candidates, `{held}` the condition that a
# chunk `held` is one of them: how many passages each of their files holds. Each file is
# counted once, a range of the index on chunks.document_id: a count in each row would
# count a changelog's thousands of passages again for each of its candidates.
FILE_PASSAGES = (
    "LEFT JOIN (SELECT siblings.document_id, count(*) AS passages FROM chunks AS siblings "
    "WHERE siblings.document_id IN (SELECT held.document_id FROM chunks AS held WHERE {held}) "
    "GROUP BY siblings.document_id) AS files "
    "ON files.document_id = documents.id AND documents.metadata_json IS NULL"
)
_CHUNKS_AND_DOCUMENTS = "FROM chunks JOIN documents ON chunks.document_id = documents.id"
CHUNKS = f"SELECT {', '.join(CHUNK_COLUMNS)} {_CHUNKS_AND_DOCUMENTS}"
CANDIDATES = f"SELECT {CANDIDATE_COLUMNS} {_CHUNKS_AND_DOCUMENTS} {FILE_PASSAGES}"
DOCUMENT = "SELECT id, path, size, mtime_ns, sha256, host, metadata_json FROM documents"
# The files holding each hit's text among those a filter allows (`documents`, `{where}`),
# in path order, and beside the first of them its passage at the hit's place when that
# file is another and its passage there has the hit's text (`hits` is the ids' condition).
# Either hash column may hold a key (old rows have only `sha256`); each is indexed, so the
# OR stays two index lookups.
_OWN_KEY = "COALESCE(own.text_sha256, own.sha256)"
_HOLDERS = (
    "SELECT hit.id AS hit, hit.ordinal AS ordinal, hit.text AS text, own.id AS own, "
    "documents.id AS document, documents.path AS path, ROW_NUMBER() OVER "
    "(PARTITION BY hit.id ORDER BY documents.path, documents.id) AS place "
    "FROM chunks AS hit JOIN documents AS own ON own.id = hit.document_id "
    f"JOIN documents ON (documents.text_sha256 = {_OWN_KEY} OR "
    f"(documents.text_sha256 IS NULL AND documents.sha256 = {_OWN_KEY})) "
    "WHERE {hits} AND own.metadata_json IS NULL AND documents.metadata_json IS NULL "
    "AND ({where})"
)
COPIES = (
    "WITH holders AS (" + _HOLDERS + ") "
    f"SELECT holders.hit, holders.document, holders.path, {', '.join(CHUNK_COLUMNS)} "
    "FROM holders LEFT JOIN chunks ON holders.place = 1 AND holders.document <> holders.own "
    "AND chunks.document_id = holders.document AND chunks.ordinal = holders.ordinal "
    "AND chunks.text = holders.text "
    "LEFT JOIN documents ON documents.id = chunks.document_id "
    "ORDER BY holders.hit, holders.place"
)


def batches(values: Sequence[Any], size: int = BATCH) -> Iterator[Sequence[Any]]:
    """`values` in slices of at most `size`."""
    for first in range(0, len(values), size):
        yield values[first : first + size]


def among(column: str, values: Sequence[Any], dialect: str, name: str = "i") -> tuple[str, dict]:
    """The condition `column` is one of `values`, and its parameters: one array on
    PostgreSQL (`= ANY`: one statement text whatever the count, so it is prepared and
    planned once, where an `IN` list is a new text for each count), a list of parameters
    on SQLite."""
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
    """The part of a snapshot every SQL backend shares: its manifest, and the rows of
    candidates, what hits show, the counts and the chunks a filter allows, read by `rows`
    (one statement in the snapshot's transaction) in `dialect` (`sqlite` or
    `postgresql`). A backend reads the query terms' evidence its own way (`term_reads`),
    writes a filter's words as its own full-text condition (`words_sql`), and may send
    several statements together (`batch`)."""

    def __init__(self, rows: Rows, dialect: str, manifest: Manifest):
        self.rows = rows
        self.dialect = dialect
        self._manifest = manifest
        self._allowed: dict[SearchFilter, np.ndarray] = {}
        self._chunk_total: int | None = None  # counted once: the snapshot's state is fixed

    @property
    def manifest(self) -> Manifest:
        """The manifest of the state this snapshot reads."""
        return self._manifest

    def batch(self, statements: Sequence[Statement]) -> list[Sequence[Sequence[Any]]]:
        """Each statement's rows, in order (one after the other here)."""
        return [self.rows(sql, values) for sql, values in statements]

    def allowed_chunks(self, where: SearchFilter) -> np.ndarray:
        """The ids of the chunks `where` allows (sorted; once per snapshot)."""
        if where not in self._allowed:
            condition, values = self.chunk_condition(where)
            found = self.rows(allowed_chunks_sql(condition), values)
            self._allowed[where] = np.fromiter((row[0] for row in found), np.int64, len(found))
        return self._allowed[where]

    def chunk_condition(self, where: SearchFilter) -> tuple[str, dict[str, Any]]:
        """`where` as one condition on `chunks` joined with `documents`: its condition on
        documents (`SearchFilter.sql`) and this store's for its words, and their values."""
        condition, values = where.sql(self.dialect)
        if not where.words:
            return condition, values
        words, named = self.words_sql(where.words)
        return f"({condition}) AND {words}", values | named

    def words_sql(self, words: WordFilter) -> tuple[str, dict[str, Any]]:
        """This store's condition that a chunk (`chunks`) holds every phrase of `words`
        and none of its exclusions, and its values."""
        raise NotImplementedError

    def chunk_count(self, where: SearchFilter | None = None) -> int:
        """How many chunks there are, or how many `where` allows (each once)."""
        if not where:
            if self._chunk_total is None:
                self._chunk_total = int(self.rows("SELECT count(*) FROM chunks", {})[0][0])
            return self._chunk_total
        return len(self.allowed_chunks(where))

    def chunks(self, chunk_ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks with these ids, with their documents' paths; unknown ids left out."""
        found: dict[int, StoredChunk] = {}
        for batch in batches([int(i) for i in chunk_ids]):
            condition, values = among("chunks.id", batch, self.dialect)
            for row in self.rows(f"{CHUNKS} WHERE {condition}", values):
                found[row[0]] = StoredChunk(*row)
        return found

    def candidate_rows(self, chunk_ids: Iterable[int]) -> CandidateRows:
        """The chunks with these ids (unknown ids left out), and the content key and
        passage count of each of their documents that is a file."""
        found = CandidateRows()
        for batch in batches([int(i) for i in chunk_ids]):
            condition, values = among("chunks.id", batch, self.dialect)
            held, _ = among("held.id", batch, self.dialect)  # the same values
            for row in self.rows(f"{CANDIDATES.format(held=held)} WHERE {condition}", values):
                found.add(row)
        return found

    def shown(
        self, chunk_ids: Sequence[int], terms: Sequence[str], where: SearchFilter | None = None
    ) -> ShownHits:
        """What these hits show: their copies (`COPIES`) and the terms' evidence over
        them, every statement sent in one `batch`."""
        ids = list(dict.fromkeys(int(i) for i in chunk_ids))
        asked = list(terms) if ids else []
        condition, allowed = where.sql(self.dialect) if where else ("1 = 1", {})
        statements: list[Statement] = []
        for batch in batches(ids):
            hits, values = among("hit.id", batch, self.dialect)
            statements.append((COPIES.format(hits=hits, where=condition), values | allowed))
        copying = len(statements)
        total = self.known_chunk_count() if asked else 0
        if total is None:
            statements.append(("SELECT count(*) FROM chunks", {}))
        evidence, read_evidence = self.term_reads(asked, ids) if asked else ([], None)
        answers = self.batch(statements + evidence)
        if total is None:
            total = self.counted_chunks(int(answers[copying][0][0]))
        terms_read = TermEvidence(0, {}, {})
        if read_evidence is not None:
            counts, holders = read_evidence(answers[len(statements) :])
            terms_read = TermEvidence(total, counts, holders)
        return ShownHits(_copies(answers[:copying]), terms_read)

    def known_chunk_count(self) -> int | None:
        """How many chunks there are, when this snapshot counted them already."""
        return self._chunk_total

    def counted_chunks(self, count: int) -> int:
        """Take note of the chunks' count a statement read; the count."""
        self._chunk_total = count
        return count

    def term_reads(self, terms: list[str], chunk_ids: list[int]) -> TermReads:
        """How this store reads how many chunks hold each term, and which of these do."""
        raise NotImplementedError

    def document(self, document_id: int) -> tuple[StoredDocument, list[StoredChunk]] | None:
        """A document and its chunks in order, or None."""
        found = self.rows(f"{DOCUMENT} WHERE id = :id", {"id": document_id})
        if not found:
            return None
        rows = self.rows(
            f"{CHUNKS} WHERE chunks.document_id = :id ORDER BY chunks.ordinal", {"id": document_id}
        )
        return StoredDocument(*found[0]), [StoredChunk(*row) for row in rows]

    def documents_at(self, path: str) -> list[StoredDocument]:
        """The documents stored at exactly this path, one per host, by id."""
        found = self.rows(f"{DOCUMENT} WHERE path = :path ORDER BY id", {"path": path})
        return [StoredDocument(*row) for row in found]

    def counts(self) -> dict[str, int]:
        """How many documents and chunks there are."""
        return counts(self.rows)

    def completeness(self) -> Completeness:
        """How many passages there are, and how many have their contextual vector."""
        passages = int(self.rows("SELECT count(*) FROM chunks", {})[0][0])
        unfilled = 0
        if self.manifest.unfilled:
            condition, values = in_ranges(self.manifest.unfilled)
            unfilled = int(
                self.rows(f"SELECT count(*) FROM chunks WHERE {condition}", values)[0][0]
            )
        return Completeness(passages, passages - unfilled)

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


@dataclass
class CandidateRows:
    """A search's candidates as read with `CANDIDATE_COLUMNS`: each chunk by id, and by
    document id each file's content key and passage count (`Candidates`)."""

    chunks: dict[int, StoredChunk] = field(default_factory=dict)
    content_keys: dict[int, str] = field(default_factory=dict)
    passages: dict[int, int] = field(default_factory=dict)

    def add(self, row: Sequence[Any]) -> None:
        """Keep a row of `CANDIDATE_COLUMNS`."""
        *columns, key, passages = row
        chunk = StoredChunk(*columns)
        self.chunks[chunk.id] = chunk
        if key is not None:
            self.content_keys[chunk.document_id] = key
            self.passages[chunk.document_id] = int(passages)


def _copies(answers: list[Sequence[Sequence[Any]]]) -> dict[int, Copies]:
    """`COPIES`'s rows as each hit's `Copies`."""
    files: dict[int, list[tuple[int, str]]] = {}
    first: dict[int, StoredChunk] = {}
    for rows in answers:
        for hit, document, path, *passage in rows:
            files.setdefault(int(hit), []).append((int(document), path))
            if passage[0] is not None:
                first[int(hit)] = StoredChunk(*passage)
    return {hit: Copies(found, first.get(hit)) for hit, found in files.items()}
