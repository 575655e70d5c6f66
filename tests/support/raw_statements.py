"""SQL run on an index's database behind its store's back: to make an index what an
older version left (a column dropped, a migration's record deleted)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from indexer.store.local.index_files import DATABASE_FILE


def run_statements(target: Path | str, statements: list[str]) -> None:
    """Run `statements` in one transaction on the index at `target` (a folder or a
    PostgreSQL URL, in the index's own schema)."""
    if isinstance(target, Path):
        database = sqlite3.connect(target / DATABASE_FILE)
        with database:
            for statement in statements:
                database.execute(statement)
        database.close()
        return
    from sqlalchemy import create_engine, text

    from indexer.store.postgres.location import PostgresLocation

    location = PostgresLocation.parse(target)
    engine = create_engine(location.url)
    with engine.begin() as connection:
        connection.execute(text(f"SET search_path TO {location.schema}"))
        for statement in statements:
            connection.execute(text(statement))
    engine.dispose()
