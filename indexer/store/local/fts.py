"""The embedded lexical space: BM25 over chunk text with SQLite FTS5.

The FTS5 table indexes the `chunks` table as external content, and triggers keep it in
step: a chunk inserted or deleted changes the lexical space in the same transaction, so
it is as incremental and crash-consistent as the rest of the store. Its queries are in
`bm25.py`.

Settings, measured on SciFact *train* (809 claims; see docs/fusion.md): the Porter
stemmer over unicode61 with diacritics folded, and English stop words dropped from
queries (nDCG@10 0.699 vs 0.701 with them, at a third of the query time).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from indexer.store.local.bm25 import FTS_TABLE, bm25_scores, bm25_search
from indexer.store.local.connections import ReadConnections, sqlite_rows
from indexer.store.local.sqlite_uri import sqlite_uri
from indexer.store.sql_reads import among

TOKENIZER = "porter unicode61 remove_diacritics 2"
SETTINGS = {
    "backend": "sqlite-fts5 bm25",
    "tokenizer": TOKENIZER,
    "query_stop_words": "english (stop-words package, alphabetic entries)",
}
REBUILD = f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')"  # re-read every chunk


def fts_statements(content_table: str = "chunks", tokenizer: str = TOKENIZER) -> list[str]:
    """The statements that create the FTS5 table over `content_table(id, text)` and its
    triggers, and fill it."""
    return [
        f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(text, content='{content_table}', "
        f"content_rowid='id', tokenize='{tokenizer}')",
        f"CREATE TRIGGER {FTS_TABLE}_insert AFTER INSERT ON {content_table} BEGIN "
        f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (new.id, new.text); END",
        f"CREATE TRIGGER {FTS_TABLE}_delete AFTER DELETE ON {content_table} BEGIN "
        f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text) VALUES ('delete', old.id, old.text); "
        "END",
        f"CREATE TRIGGER {FTS_TABLE}_update AFTER UPDATE OF text ON {content_table} BEGIN "
        f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text) VALUES ('delete', old.id, old.text); "
        f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (new.id, new.text); END",
        REBUILD,
    ]


class TextCollection:
    """BM25 over a list of texts in a standalone SQLite file (the lab's lexical baseline):
    the same FTS5 setup and queries as an index's lexical space, with row = position."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._reads = ReadConnections(self.path, str(self.path))

    @classmethod
    def write(cls, path: Path, texts: list[str]) -> TextCollection:
        """Make the file from `texts` (replacing any old one)."""
        Path(path).unlink(missing_ok=True)
        connection = sqlite3.connect(sqlite_uri(Path(path)), uri=True)
        try:
            with connection:
                connection.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, text TEXT)")
                for statement in fts_statements("chunks"):
                    connection.execute(statement)
                connection.executemany(
                    "INSERT INTO chunks (id, text) VALUES (?, ?)", enumerate(texts)
                )
        finally:
            connection.close()
        return cls(path)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The best `k` (row, BM25 score) pairs."""
        with self._reads.transaction() as connection:
            return bm25_search(sqlite_rows(connection, str(self.path)), query, k)

    def scores(self, query: str, rows: list[int]) -> dict[int, float]:
        """The BM25 score of each of these rows that holds a query term."""
        with self._reads.transaction() as connection:
            return bm25_scores(sqlite_rows(connection, str(self.path)), query, rows)

    def texts(self, rows: list[int]) -> dict[int, str]:
        """The texts of these rows."""
        condition, values = among("id", rows, "sqlite")
        with self._reads.transaction() as connection:
            found = sqlite_rows(connection, str(self.path))(
                f"SELECT id, text FROM chunks WHERE {condition}", values
            )
        return {int(row): text for row, text in found}

    def close(self) -> None:
        """Release the file."""
        self._reads.close()
