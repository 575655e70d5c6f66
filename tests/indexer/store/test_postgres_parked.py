"""A PostgreSQL snapshot's COMMIT is sent and not waited for: the connection is parked
until the next snapshot reads the answer. The server must end the transaction all the
same (no snapshot held open between queries), and closing the store must close them."""

from __future__ import annotations

import time

import psycopg
import pytest

from indexer import Indexer
from indexer.store.backends import open_store

pytestmark = pytest.mark.postgres


def server_session(store) -> psycopg.Connection:
    url = store.engine.url
    return psycopg.connect(
        host=url.host, port=url.port, user=url.username, dbname=url.database, autocommit=True
    )


def backend_state(other: psycopg.Connection, pid: int) -> tuple[str, object] | None:
    """The server's view of a session: its state and its snapshot's xmin (None: gone)."""
    row = other.execute(
        "SELECT state, backend_xmin FROM pg_stat_activity WHERE pid = %s", (pid,)
    ).fetchone()
    return None if row is None else (row[0], row[1])


def settles_to(other: psycopg.Connection, pid: int, wanted: tuple[str, object] | None):
    """The session's state once it stops changing towards `wanted` (30 s at most)."""
    deadline = time.monotonic() + 30
    while (found := backend_state(other, pid)) != wanted and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def pid_of(snapshot) -> int:
    return snapshot.rows("SELECT pg_backend_pid()", {})[0][0]


def test_an_ended_snapshot_holds_no_transaction_on_the_server(notes_store):
    """Its COMMIT's answer unread, the session is idle all the same: no snapshot (xmin)
    holding back VACUUM, no lock holding back a writer's DDL."""
    with notes_store.snapshot() as snapshot:
        pid = pid_of(snapshot)
    with server_session(notes_store) as other:
        assert settles_to(other, pid, ("idle", None)) == ("idle", None)


def test_the_next_snapshot_reads_the_answer_and_goes_on_on_the_same_connection(notes_store):
    with notes_store.snapshot() as snapshot:
        pid, generation = pid_of(snapshot), snapshot.manifest.generation
    for _ in range(3):
        with notes_store.snapshot() as snapshot:
            assert pid_of(snapshot) == pid and snapshot.manifest.generation == generation


def test_closing_the_store_closes_its_parked_connections(postgres_index, notes, fast_model):
    Indexer(postgres_index, model=fast_model).index_folder(notes)
    store = open_store(postgres_index)
    with store.snapshot() as snapshot:
        pid = pid_of(snapshot)
    store.close()
    with server_session(store) as other:
        assert settles_to(other, pid, None) is None


def test_a_store_dropped_unclosed_gives_its_parked_connections_back_quietly(
    postgres_index, notes, fast_model, caplog
):
    """Its parked connections are collected with it: the pool's reset reads the COMMIT's
    answer first (psycopg's ROLLBACK fails while one is unread, and SQLAlchemy logs it
    with a traceback)."""
    import gc
    import logging

    Indexer(postgres_index, model=fast_model).index_folder(notes)
    store = open_store(postgres_index)
    with store.snapshot() as snapshot:
        snapshot.manifest  # noqa: B018 (begins the transaction, so its COMMIT is parked)
    with caplog.at_level(logging.ERROR, logger="sqlalchemy"):
        del store, snapshot
        gc.collect()
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
