"""Which PostgreSQL index a URL names: the database, and the schema that holds the index.

    postgresql+psycopg://USER[:PASSWORD]@HOST:PORT/DB[?index=NAME]

Several indexes share one database, one schema each: `?index=NAME` (or `?schema=NAME`)
picks it, `ctxsearch` by default. Other query parameters go to the driver.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from indexer.errors import InvalidTarget

DEFAULT_SCHEMA = "ctxsearch"
_SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_SELECTORS = ("index", "schema")


@dataclass(frozen=True)
class PostgresLocation:
    """A parsed index URL: the driver's URL, the schema, and a form fit to show."""

    url: object  # sqlalchemy.engine.URL, for create_engine
    schema: str
    display: str

    @classmethod
    def parse(cls, text: str) -> PostgresLocation:
        """Parse `text`; raise `InvalidTarget` with the reason if it is not usable."""
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            url = make_url(text)
        except ArgumentError as error:
            raise InvalidTarget(f"{text!r} is not a database URL ({error})") from error
        if url.get_backend_name() != "postgresql":
            raise InvalidTarget(f"{text!r}: only postgresql+psycopg:// URLs are supported")
        if url.get_driver_name() not in ("psycopg", "postgresql"):
            raise InvalidTarget(
                f"{text!r}: use the psycopg driver (postgresql+psycopg://USER@HOST:PORT/DB)"
            )
        if not url.database:
            raise InvalidTarget(f"{text!r}: name the database (postgresql+psycopg://.../DB)")
        given = [url.query[key] for key in _SELECTORS if key in url.query]
        if len(given) > 1 or any(not isinstance(name, str) for name in given):
            raise InvalidTarget(f"{text!r}: give ?index=NAME once")
        schema = str(given[0]) if given else DEFAULT_SCHEMA
        if not _SCHEMA.match(schema):
            raise InvalidTarget(
                f"index name {schema!r}: use lower-case letters, digits and _ (at most 63)"
            )
        if schema.startswith("pg_") or schema == "information_schema":
            raise InvalidTarget(f"index name {schema!r}: that schema is PostgreSQL's own")
        url = url.set(drivername="postgresql+psycopg").difference_update_query(_SELECTORS)
        display = url.render_as_string(hide_password=True) + f"?index={schema}"
        return cls(url=url, schema=schema, display=display)
