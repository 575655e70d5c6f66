"""How the path of an SQLite file becomes what SQLite opens: quoted, never pasted.

In an SQLite URI (and in SQLAlchemy's URLs) `?` starts the parameters, `#` a fragment
and `%` an escape, so a pasted path misleads both: `app?v=2/ctxsearch.sqlite` opened
the file `app`, `ix%41/...` the index `ixA`. `Path.as_uri` percent-quotes every byte of
the path but letters, digits and `/._-~`, so the URI names exactly that file and every
parameter in it is ours. The readers open it with sqlite3 (`connections.py`), the writer
with SQLAlchemy (`database.py`).
"""

from __future__ import annotations

from pathlib import Path


def sqlite_uri(database: Path, read_only: bool = False, immutable: bool = False) -> str:
    """The `file:` URI of the SQLite file `database` (read-only, or also `immutable`: for
    a read-only folder or mount, where nobody can change the file under the reader)."""
    parameters = ["mode=ro"] if read_only or immutable else []
    if immutable:
        parameters.append("immutable=1")
    uri = Path(database).absolute().as_uri()
    return f"{uri}?{'&'.join(parameters)}" if parameters else uri
