"""The PostgreSQL store's connection pool, sized by use: the searches a server runs at
once keep their connections between queries (no connection opened per query), and
$CTXSEARCH_POSTGRES_POOL caps how many a store keeps."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import event

from indexer import Indexer
from indexer.config import POSTGRES_POOL
from indexer.store.backends import open_store

pytestmark = pytest.mark.postgres


def connections_opened(store) -> list[int]:
    """A list that grows by one each time the store's engine opens a database connection."""
    opened: list[int] = []
    event.listen(store.engine, "connect", lambda *_: opened.append(1))
    return opened


def concurrent_snapshots(store, searches: int, rounds: int) -> None:
    """`rounds` times, `searches` threads each holding a snapshot at the same moment."""
    together = threading.Barrier(searches)
    failed: list[BaseException] = []

    def search() -> None:
        try:
            for _ in range(rounds):
                with store.snapshot() as snapshot:
                    snapshot.space_size("contextual")
                    together.wait(timeout=60)
                together.wait(timeout=60)  # every snapshot of the round has ended
        except BaseException as error:  # reported below
            failed.append(error)

    threads = [threading.Thread(target=search) for _ in range(searches)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failed, failed


@pytest.fixture
def indexed(postgres_index, notes, fast_model):
    Indexer(postgres_index, model=fast_model).index_folder(notes)
    return postgres_index


def test_concurrent_searches_keep_their_connections_between_queries(indexed):
    store = open_store(indexed)
    try:
        opened = connections_opened(store)
        concurrent_snapshots(store, searches=12, rounds=1)
        first = len(opened)
        concurrent_snapshots(store, searches=12, rounds=2)
    finally:
        store.close()
    assert 11 <= first <= 12  # the store may hold one from opening the index
    assert len(opened) == first


def test_the_pool_keeps_at_most_what_the_variable_says(indexed, monkeypatch):
    monkeypatch.setenv(POSTGRES_POOL.name, "3")
    store = open_store(indexed)
    try:
        opened = connections_opened(store)
        concurrent_snapshots(store, searches=3, rounds=2)
        first = len(opened)
        concurrent_snapshots(store, searches=5, rounds=2)
    finally:
        store.close()
    assert 2 <= first <= 3
    # the two beyond the pool are opened for each round and closed after it
    assert len(opened) == first + 2 * 2


def test_a_bad_pool_size_is_one_line(indexed, monkeypatch):
    from indexer.errors import InvalidSettings

    monkeypatch.setenv(POSTGRES_POOL.name, "many")
    with pytest.raises(InvalidSettings, match="CTXSEARCH_POSTGRES_POOL must be a whole number"):
        open_store(indexed)


def test_searches_beyond_every_connection_are_a_busy_error_not_a_traceback(indexed, monkeypatch):
    """SQLAlchemy's pool timeout is not a DBAPIError: past the pool and its overflow, a
    search waiting for a connection raised sqlalchemy.exc.TimeoutError."""
    from indexer.errors import IndexLocked
    from indexer.store.postgres import database

    monkeypatch.setenv(POSTGRES_POOL.name, "1")
    monkeypatch.setattr(database, "OVERFLOW", 0)
    monkeypatch.setattr(database, "POOL_WAIT_SECONDS", 0.2)
    store = open_store(indexed)
    try:
        with store.snapshot() as held:
            held.space_size("contextual")
            busy = pytest.raises(IndexLocked, match=r"every database connection .* is in use")
            with busy, store.snapshot() as waiting:
                waiting.space_size("contextual")
        with store.snapshot() as after:  # the connection is back: searches go on
            assert after.space_size("contextual") > 0
    finally:
        store.close()
