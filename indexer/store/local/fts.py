"""The embedded lexical space: BM25 over chunk text with SQLite FTS5.

The FTS5 table indexes each chunk's `indexed_text` where it has one (its CJK runs as
characters and pairs, `indexer.cjk`), else its `text`, through the view `chunks_lexical`
as external content, and triggers keep it in step: a chunk inserted or deleted changes
the lexical space in the same transaction, so it is as incremental and crash-consistent
as the rest of the store. Its queries are in `bm25.py`.

Settings, measured on SciFact *train* (809 claims; see docs/fusion.md): the Porter
stemmer over unicode61 with diacritics folded, and English stop words dropped from
queries (nDCG@10 0.699 vs 0.701 with them, at a third of the query time).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from indexer.cjk import CJK_UNITS, indexed_form
from indexer.store.local.bm25 import FTS_TABLE, bm25_scores, bm25_search
from indexer.store.local.connections import ReadConnections, sqlite_rows
from indexer.store.local.sqlite_uri import sqlite_uri
from indexer.store.sql_reads import among

LEXICAL_VIEW = "chunks_lexical"
TOKENIZER = "porter unicode61 remove_diacritics 2"
SETTINGS = {
    "backend": "sqlite-fts5 bm25",
    "tokenizer": TOKENIZER,
    "cjk": CJK_UNITS,
    "query_stop_words": "english (stop-words package, alphabetic entries)",
}
REBUILD = f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')"  # re-read every chunk


def fts_statements(content_table: str = "chunks", tokenizer: str = TOKENIZER) -> list[str]:
    """The statements that create the FTS5 table over `content_table(id, text)` and its
    triggers, and fill it (migration 0002's; `indexed_text_statements` makes it now)."""
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


def indexed_text_statements(tokenizer: str = TOKENIZER) -> list[str]:
    """The statements that (re)make the FTS5 table over `chunks` so that it indexes each
    chunk's `indexed_text` where it has one, else its `text`, and fill it. The content
    table is a view, which the `rebuild` and `integrity-check` commands read: what the
    table holds must be what the triggers gave it."""
    indexed = "coalesce({row}.indexed_text, {row}.text)"
    new, old = indexed.format(row="new"), indexed.format(row="old")
    return [
        *(f"DROP TRIGGER IF EXISTS {FTS_TABLE}_{kind}" for kind in ("insert", "delete", "update")),
        f"DROP TABLE IF EXISTS {FTS_TABLE}",
        f"DROP VIEW IF EXISTS {LEXICAL_VIEW}",
        f"CREATE VIEW {LEXICAL_VIEW} AS SELECT id, coalesce(indexed_text, text) AS text "
        "FROM chunks",
        f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(text, content='{LEXICAL_VIEW}', "
        f"content_rowid='id', tokenize='{tokenizer}')",
        f"CREATE TRIGGER {FTS_TABLE}_insert AFTER INSERT ON chunks BEGIN "
        f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (new.id, {new}); END",
        f"CREATE TRIGGER {FTS_TABLE}_delete AFTER DELETE ON chunks BEGIN "
        f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text) VALUES ('delete', old.id, {old}); "
        "END",
        f"CREATE TRIGGER {FTS_TABLE}_update AFTER UPDATE OF text, indexed_text ON chunks BEGIN "
        f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text) VALUES ('delete', old.id, {old}); "
        f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (new.id, {new}); END",
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
                connection.execute(
                    "CREATE TABLE chunks (id INTEGER PRIMARY KEY, text TEXT, indexed_text TEXT)"
                )
                for statement in indexed_text_statements():
                    connection.execute(statement)
                connection.executemany(
                    "INSERT INTO chunks (id, text, indexed_text) VALUES (?, ?, ?)",
                    ((row, value, indexed_form(value)) for row, value in enumerate(texts)),
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
