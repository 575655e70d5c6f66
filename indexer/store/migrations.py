"""Named schema migrations, applied in order and recorded in the `migrations` table.

One list of names for every SQL backend; each migration writes the SQL of its own time for
each dialect, never derived from the current models, so an old database always migrates
the same way. Append; never edit one that has shipped.

Importing this module does not import SQLAlchemy: a reader checks `MIGRATION_NAMES`
against the database's `migrations` table with sqlite3, and only a database that lacks
one is opened with SQLAlchemy to migrate it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Connection

Migration = Callable[["Connection"], None]


def _run(connection: Connection, statements: list[str]) -> None:
    from sqlalchemy import text

    for statement in statements:
        connection.execute(text(statement))


def _m0001_initial(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        _run(
            connection,
            [
                "CREATE TABLE manifest (key VARCHAR NOT NULL PRIMARY KEY, value TEXT NOT NULL)",
                """CREATE TABLE documents (
                    id BIGSERIAL NOT NULL PRIMARY KEY,
                    path VARCHAR NOT NULL,
                    size BIGINT NOT NULL,
                    mtime_ns BIGINT NOT NULL,
                    sha256 VARCHAR(64) NOT NULL,
                    indexed_at DOUBLE PRECISION NOT NULL)""",
                """CREATE TABLE chunks (
                    id BIGSERIAL NOT NULL PRIMARY KEY,
                    document_id BIGINT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
                    ordinal INTEGER NOT NULL,
                    start INTEGER NOT NULL,
                    "end" INTEGER NOT NULL,
                    text TEXT NOT NULL)""",
                "CREATE INDEX ix_chunks_document_id ON chunks (document_id)",
            ],
        )
        return
    _run(
        connection,
        [
            "CREATE TABLE manifest (key VARCHAR NOT NULL PRIMARY KEY, value TEXT NOT NULL)",
            """CREATE TABLE documents (
            id INTEGER NOT NULL PRIMARY KEY,
            path VARCHAR NOT NULL UNIQUE,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            sha256 VARCHAR(64) NOT NULL,
            indexed_at FLOAT NOT NULL)""",
            """CREATE TABLE chunks (
            id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
            document_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            text TEXT NOT NULL)""",
            "CREATE INDEX ix_chunks_document_id ON chunks (document_id)",
        ],
    )


def _m0002_lexical_space(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        from indexer.store.postgres.fulltext import create_fulltext_space

        create_fulltext_space(connection, "english")
        return
    from indexer.store.local.fts import fts_statements

    _run(connection, fts_statements("chunks", tokenizer="porter unicode61 remove_diacritics 2"))


def _m0003_hosts_and_roots(connection: Connection) -> None:
    """Documents keyed by (host, path), so that machines sharing a database never collide;
    and the roots indexed on their own, whose documents a parent's run leaves alone."""
    postgres = connection.dialect.name == "postgresql"
    _run(
        connection,
        [
            "ALTER TABLE documents ADD COLUMN host VARCHAR NOT NULL DEFAULT ''",
            "CREATE UNIQUE INDEX uq_documents_host_path ON documents (host, path)",
            f"""CREATE TABLE roots (
            id {"BIGSERIAL" if postgres else "INTEGER"} NOT NULL PRIMARY KEY,
            host VARCHAR NOT NULL DEFAULT '',
            path VARCHAR NOT NULL,
            indexed_at {"DOUBLE PRECISION" if postgres else "FLOAT"} NOT NULL)""",
            "CREATE UNIQUE INDEX uq_roots_host_path ON roots (host, path)",
        ],
    )


def _m0004_locations_and_root_rules(connection: Connection) -> None:
    """Where each chunk sits in its file (lines, heading, PDF page; NULL in rows from
    before, which hydration fills from the stored text where it can); and the
    --exclude/--include patterns remembered for each root (JSON, NULL: none)."""
    _run(
        connection,
        [
            "ALTER TABLE chunks ADD COLUMN line INTEGER",
            "ALTER TABLE chunks ADD COLUMN end_line INTEGER",
            "ALTER TABLE chunks ADD COLUMN heading TEXT",
            "ALTER TABLE chunks ADD COLUMN page INTEGER",
            "ALTER TABLE roots ADD COLUMN rules TEXT",
        ],
    )


def _m0005_records(connection: Connection) -> None:
    """Records from apps: documents that are no file (`path` is `record:ID`), with their
    metadata as JSON (`metadata_json`, NULL for files) and as key/value rows that
    `where` filters match (values as text, see `indexer.records`)."""
    postgres = connection.dialect.name == "postgresql"
    _run(
        connection,
        [
            "ALTER TABLE documents ADD COLUMN metadata_json TEXT",
            f"""CREATE TABLE record_metadata (
            document_id {"BIGINT" if postgres else "INTEGER"} NOT NULL
                REFERENCES documents (id) ON DELETE CASCADE,
            key VARCHAR NOT NULL,
            value VARCHAR NOT NULL,
            PRIMARY KEY (document_id, key))""",
            "CREATE INDEX ix_record_metadata_key_value ON record_metadata (key, value)",
        ],
    )


def _m0006_sections(connection: Connection) -> None:
    """The trail of the section holding each chunk (its titles joined by a right-pointing
    angle quote; NULL in rows from before, which keep the heading of their window's
    start)."""
    _run(connection, ["ALTER TABLE chunks ADD COLUMN section TEXT"])


def _m0007_content_keys(connection: Connection) -> None:
    """Each chunk's content key (`indexer.store.content_keys`): the hash of its text and
    the settings its vectors were made with, by which a run finds vectors to reuse.
    NULL in rows from before: they are never reused, and get a key when encoded again."""
    _run(
        connection,
        [
            "ALTER TABLE chunks ADD COLUMN content_key VARCHAR(64)",
            "CREATE INDEX ix_chunks_content_key ON chunks (content_key)",
        ],
    )


def _m0008_document_text(connection: Connection) -> None:
    """The hash of each document's extracted text (`text_sha256`, NULL in rows from before:
    their `sha256` of the file's bytes stands in), so that identical documents are one
    hit; and each chunk's line map (`line_map`, JSON: see `indexer.reading.line_map`) for
    the formats whose text is not the file (HTML source lines, PDF page lines)."""
    _run(
        connection,
        [
            "ALTER TABLE documents ADD COLUMN text_sha256 VARCHAR(64)",
            "CREATE INDEX ix_documents_text_sha256 ON documents (text_sha256)",
            "CREATE INDEX ix_documents_sha256 ON documents (sha256)",
            "ALTER TABLE chunks ADD COLUMN line_map TEXT",
        ],
    )


def _m0009_bm25(connection: Connection) -> None:
    """PostgreSQL: the tsvector column made with the Porter stemmer (FTS5's) instead of
    Snowball's English one, and what BM25 needs (each chunk's length, each term's
    document frequency, the totals), kept by triggers in the chunks' transactions; the
    manifest's lexical settings say so. The embedded store's FTS5 has always ranked by
    BM25."""
    if connection.dialect.name != "postgresql":
        return
    from indexer.store.postgres.fulltext import use_porter_configuration
    from indexer.store.postgres.term_counts import create_term_counts

    use_porter_configuration(connection)
    create_term_counts(connection)
    _record_lexical_settings(connection)


def _m0010_fts5_tokens(connection: Connection) -> None:
    """PostgreSQL: the tsvector column and each chunk's length made of FTS5's tokens
    (the text split as unicode61 splits it, accents and case folded, then the Porter
    stemmer; `indexer.store.postgres.fts5_tokens`) instead of PostgreSQL's parser's, and
    the term counts and totals recounted from them, so both stores rank alike."""
    if connection.dialect.name != "postgresql":
        return
    from indexer.store.postgres.fts5_tokens import use_fts5_tokens
    from indexer.store.postgres.term_counts import recount_terms

    use_fts5_tokens(connection)
    recount_terms(connection)
    _record_lexical_settings(connection)


def _record_lexical_settings(connection: Connection) -> None:
    """The manifest's lexical settings: those of the PostgreSQL store's code now."""
    import json

    from sqlalchemy import text

    from indexer.store.postgres.fulltext import SETTINGS

    connection.execute(
        text("UPDATE manifest SET value = :value WHERE key = 'lexical'"),
        {"value": json.dumps(SETTINGS)},
    )


def _m0011_deferred_term_counts(connection: Connection) -> None:
    """PostgreSQL: the BM25 term-count triggers can be turned off for one transaction,
    which counts everything once before it commits (a first fill: `term_counts.py`)."""
    if connection.dialect.name != "postgresql":
        return
    from sqlalchemy import text

    from indexer.store.postgres.term_counts import counting_functions

    for statement in counting_functions():
        connection.execute(text(statement))


def _m0012_file_identity(connection: Connection) -> None:
    """Each file's ctime and inode as the run that read it saw them (NULL for records and
    in rows from before): a file is unchanged only when its size, mtime, ctime and inode
    are all those stored, so a copy that kept the size and the mtime (`cp -p`, `rsync
    -t`) is read again. A row without them is read once more, and gets them."""
    column = "BIGINT" if connection.dialect.name == "postgresql" else "INTEGER"
    _run(
        connection,
        [
            f"ALTER TABLE documents ADD COLUMN ctime_ns {column}",
            f"ALTER TABLE documents ADD COLUMN inode {column}",
        ],
    )


MIGRATIONS: list[tuple[str, Migration]] = [
    ("0001_initial", _m0001_initial),
    ("0002_lexical_space", _m0002_lexical_space),
    ("0003_hosts_and_roots", _m0003_hosts_and_roots),
    ("0004_locations_and_root_rules", _m0004_locations_and_root_rules),
    ("0005_records", _m0005_records),
    ("0006_sections", _m0006_sections),
    ("0007_content_keys", _m0007_content_keys),
    ("0008_document_text", _m0008_document_text),
    ("0009_bm25", _m0009_bm25),
    ("0010_fts5_tokens", _m0010_fts5_tokens),
    ("0011_deferred_term_counts", _m0011_deferred_term_counts),
    ("0012_file_identity", _m0012_file_identity),
]
MIGRATION_NAMES = tuple(name for name, _ in MIGRATIONS)


def migrate(connection: Connection) -> list[str]:
    """Apply every migration not yet recorded, in one transaction; return their names."""
    from sqlalchemy import text

    connection.execute(
        text(
            "CREATE TABLE IF NOT EXISTS migrations "
            "(name VARCHAR NOT NULL PRIMARY KEY, applied_at FLOAT NOT NULL)"
        )
    )
    done = {row[0] for row in connection.execute(text("SELECT name FROM migrations"))}
    applied = []
    for name, migration in MIGRATIONS:
        if name in done:
            continue
        migration(connection)
        connection.execute(
            text("INSERT INTO migrations (name, applied_at) VALUES (:name, :at)"),
            {"name": name, "at": time.time()},
        )
        applied.append(name)
    return applied


def pending(connection: Connection) -> list[str]:
    """The names of migrations this database still lacks."""
    from sqlalchemy import inspect, text

    if not inspect(connection).has_table("migrations"):
        return list(MIGRATION_NAMES)
    return missing({row[0] for row in connection.execute(text("SELECT name FROM migrations"))})


def missing(applied: set[str]) -> list[str]:
    """The names of the migrations not among those `applied`, in order."""
    return [name for name in MIGRATION_NAMES if name not in applied]
