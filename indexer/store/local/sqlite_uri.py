"""How the path of an SQLite file becomes what SQLite opens: quoted, never pasted.

In an SQLite URI (and in SQLAlchemy's URLs) `?` starts the parameters, `#` a fragment
and `%` an escape, so a pasted path misleads both: `app?v=2/ctxsearch.sqlite` opened
the file `app`, `ix%41/...` the index `ixA`. `Path.as_uri` percent-quotes every byte of
the path but letters, digits and `/._-~`, so the URI names exactly that file and every
parameter in it is ours. The standard library's sqlite3 only: the light readers use it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from indexer.store.local.sqlite_errors import busy_timeout_ms


def sqlite_uri(database: Path, read_only: bool = False, immutable: bool = False) -> str:
    """The `file:` URI of the SQLite file `database` (read-only, or also `immutable`: for
    a read-only folder or mount, where nobody can change the file under the reader)."""
    parameters = ["mode=ro"] if read_only or immutable else []
    if immutable:
        parameters.append("immutable=1")
    uri = Path(database).absolute().as_uri()
    return f"{uri}?{'&'.join(parameters)}" if parameters else uri


def read_only_connection(database: Path) -> sqlite3.Connection:
    """A read-only sqlite3 connection with explicit transactions; immutable where SQLite
    cannot add the WAL index file a reader needs (a read-only folder or mount)."""
    connection = _connect(sqlite_uri(database, read_only=True))
    try:
        connection.execute("SELECT 1 FROM manifest LIMIT 1").fetchall()
        return connection
    except sqlite3.OperationalError as error:
        connection.close()
        if "readonly" not in str(error) and "unable to open" not in str(error):
            raise
    return _connect(sqlite_uri(database, immutable=True))


def _connect(uri: str) -> sqlite3.Connection:
    timeout = busy_timeout_ms()
    connection = sqlite3.connect(uri, uri=True, isolation_level=None)
    connection.execute(f"PRAGMA busy_timeout = {timeout}")
    return connection
