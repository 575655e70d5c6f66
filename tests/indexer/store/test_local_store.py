"""What only the embedded store does: files, generations, sweeping, SQLite migrations.

What every store does is in test_store_contract.py.
"""

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.orm import Session

from indexer.errors import IndexCorrupt, IndexNotFound, ModelMismatch
from indexer.store.backends import open_store
from indexer.store.local.fts import TextCollection
from indexer.store.local.index_files import DATABASE_FILE
from indexer.store.migrations import MIGRATIONS, _m0001_initial, migrate, pending
from indexer.store.schema import Base
from tests.indexer.store.test_store_contract import add, manifest, new_store


def test_manifest_refuses_another_model_or_pooling():
    with pytest.raises(ModelMismatch, match="built with model"):
        manifest().check_model("other/model")
    with pytest.raises(ModelMismatch, match="weights"):
        manifest().check_model("test/model", "different")
    with pytest.raises(ModelMismatch, match="mean pooling"):
        manifest().check_pooling("cls")
    manifest().check_model("test/model", "abc")
    manifest().check_pooling("mean")


def test_open_refuses_missing_and_foreign_directories(tmp_path):
    with pytest.raises(IndexNotFound, match="no index here"):
        open_store(tmp_path / "nothing")
    (tmp_path / "folder").mkdir()
    with pytest.raises(IndexNotFound, match="not a ctxsearch index"):
        open_store(tmp_path / "folder")


def test_create_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("precious")
    with pytest.raises(IndexNotFound, match="not empty"):
        open_store(tmp_path / "notes", create=True)
    assert (tmp_path / "notes" / "keep.txt").read_text() == "precious"


def test_corrupt_database_and_faiss_files_are_reported(tmp_path):
    store = new_store(tmp_path / "ix")
    add(store, "/docs/a.txt", ["x"])
    store.close()
    next((tmp_path / "ix").glob("static-*.faiss")).write_bytes(b"not faiss")  # the base
    reopened = open_store(tmp_path / "ix")
    with pytest.raises(IndexCorrupt, match="unreadable FAISS"), reopened.snapshot():
        pass
    reopened.close()
    (tmp_path / "ix" / DATABASE_FILE).write_bytes(b"not sqlite" * 100)
    with pytest.raises(IndexCorrupt, match="SQLite"):
        open_store(tmp_path / "ix")


def test_a_failed_write_leaves_no_files_behind(tmp_path):
    store = new_store(tmp_path / "ix")
    add(store, "/docs/a.txt", ["kept"])
    files_before = sorted(p.name for p in (tmp_path / "ix").iterdir())
    with pytest.raises(RuntimeError), store.writer(), store.change() as change:
        change.remove_documents([1])
        raise RuntimeError("crash in the middle of a run")
    assert sorted(p.name for p in (tmp_path / "ix").iterdir()) == files_before
    store.close()


def test_each_write_publishes_the_next_generation_and_sweeps_the_old(tmp_path):
    store = new_store(tmp_path / "ix")
    reader = open_store(tmp_path / "ix")
    with reader.snapshot() as snapshot:
        assert snapshot.manifest.generation == 0
    add(store, "/docs/a.txt", ["one"])
    add(store, "/docs/b.txt", ["two"])
    assert store.manifest.generation == 2
    assert space_files(tmp_path / "ix") == SEGMENTS_OF_TWO_RUNS  # the base and two deltas
    with reader.snapshot() as snapshot:  # a long-lived reader follows the new generation
        assert snapshot.manifest.generation == 2 and snapshot.space_size("static") == 2
    with store.writer():
        store.merge_segments()
    assert space_files(tmp_path / "ix") == ["contextual-000003.faiss", "static-000003.faiss"]
    with reader.snapshot() as snapshot:
        assert snapshot.manifest.generation == 3 and snapshot.space_size("static") == 2
    store.close()
    reader.close()


SEGMENTS_OF_TWO_RUNS = [
    f"{space}-{name}"
    for space in ("contextual", "static")
    for name in ("000000.faiss", "000001.delta.npz", "000002.delta.npz")
]


def space_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".faiss" in p.name or ".npz" in p.name)


def test_a_signal_inside_the_commit_keeps_what_the_commit_published(tmp_path):
    """Issue 24, item 3: a KeyboardInterrupt rising inside `session.commit()`, after
    SQLite committed, made the clean-up sweep the generation just published."""
    store = new_store(tmp_path / "ix")
    add(store, "/docs/a.txt", ["one"])

    def interrupt(_session: Session) -> None:  # as a Ctrl-C landing after SQLite's COMMIT
        raise KeyboardInterrupt

    event.listen(Session, "after_commit", interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            add(store, "/docs/b.txt", ["two"])
    finally:
        event.remove(Session, "after_commit", interrupt)
    assert store.manifest.generation == 2  # learnt from the database, not from memory
    assert store.verify().consistent, store.verify().problems
    assert space_files(tmp_path / "ix") == SEGMENTS_OF_TWO_RUNS
    with store.snapshot() as snapshot:
        assert snapshot.space_size("static") == 2
    store.close()


def test_the_sweep_keeps_the_files_the_database_names_whatever_memory_says(tmp_path):
    store = new_store(tmp_path / "ix")
    add(store, "/docs/a.txt", ["one"])
    with store.writer():
        store.manifest.generation = 7  # a copy in memory that fell behind or ran ahead
        store.sweep()
    assert store.verify().consistent
    store.close()


def test_migrations_are_recorded_and_match_the_models(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    with engine.begin() as connection:
        assert pending(connection) == [name for name, _ in MIGRATIONS]
        assert migrate(connection) == [name for name, _ in MIGRATIONS]
        assert migrate(connection) == []
        assert pending(connection) == []
    inspector = inspect(engine)
    for table in Base.metadata.sorted_tables:
        migrated = {column["name"] for column in inspector.get_columns(table.name)}
        assert migrated == set(table.columns.keys()), table.name
    engine.dispose()


def test_an_old_database_without_the_migrations_table_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    sqlite3.connect(path).close()  # an empty database, as before any migration
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        assert migrate(connection) == [name for name, _ in MIGRATIONS]
    engine.dispose()


def test_later_migrations_keep_the_rows_of_an_0001_database(tmp_path):
    path = tmp_path / "old.sqlite"
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:  # a database as version 0001 left it, with data
        _m0001_initial(connection)
        connection.execute(
            text("CREATE TABLE migrations (name VARCHAR PRIMARY KEY, applied_at FLOAT)")
        )
        connection.execute(text("INSERT INTO migrations VALUES ('0001_initial', 0)"))
        connection.execute(text("INSERT INTO documents VALUES (1, '/a.txt', 1, 1, 'x', 0)"))
        connection.execute(text("INSERT INTO chunks VALUES (7, 1, 0, 0, 5, 'otters swim')"))
    with engine.begin() as connection:
        assert migrate(connection) == [
            "0002_lexical_space",
            "0003_hosts_and_roots",
            "0004_locations_and_root_rules",
            "0005_records",
            "0006_sections",
            "0007_content_keys",
            "0008_document_text",
            "0009_bm25",
            "0010_fts5_tokens",
            "0011_deferred_term_counts",
            "0012_file_identity",
        ]
        # a chunk from before content keys has none: its vectors are never reused
        assert connection.execute(text("SELECT id, content_key FROM chunks")).all() == [(7, None)]
        from indexer.store.local.bm25 import bm25_search
        from indexer.store.writer_rows import session_rows

        assert bm25_search(session_rows(connection), "otter", 5)[0][0] == 7
        assert connection.execute(text("SELECT host, path FROM documents")).all() == [
            ("", "/a.txt")
        ]
    engine.dispose()


def test_a_text_collection_ranks_by_bm25(tmp_path):
    collection = TextCollection.write(tmp_path / "c.sqlite", ["otters swim", "herons fish"])
    assert collection.search("heron", 5)[0][0] == 1
    collection.close()


def test_a_snapshot_loads_only_the_spaces_it_asks_for(sample_index):
    store = open_store(sample_index)
    try:
        with store.snapshot([]) as snapshot:
            assert snapshot.spaces == {} and snapshot.lexical_search("crane", 3)
        with store.snapshot(["static"]) as snapshot:
            assert set(snapshot.spaces) == {"static"}
        with store.snapshot() as snapshot:
            assert set(snapshot.spaces) == {"contextual", "static"}
    finally:
        store.close()


def test_threads_read_side_by_side_each_in_a_transaction_of_its_own(sample_index):
    """The HTTP server's threads share one store: every snapshot held at the same time has
    a connection of its own (one sqlite3 connection cannot hold two transactions)."""
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    readers = 6
    together = Barrier(readers, timeout=60)
    store = open_store(sample_index)

    def read(_n: int) -> tuple[int, dict, list]:
        with store.snapshot() as snapshot:
            together.wait()  # every reader holds its snapshot now
            return id(snapshot.connection), snapshot.counts(), snapshot.lexical_search("bank", 5)

    try:
        with store.snapshot() as snapshot:
            expected = snapshot.counts(), snapshot.lexical_search("bank", 5)
        with ThreadPoolExecutor(readers) as pool:
            found = list(pool.map(read, range(readers)))
    finally:
        store.close()
    assert len({connection for connection, _, _ in found}) == readers
    assert all((counts, hits) == expected for _, counts, hits in found)


def test_an_index_from_before_a_migration_is_migrated_when_first_read(sample_index, tmp_path):
    """The read path checks the schema with sqlite3 and migrates it (with SQLAlchemy)
    only where a migration is missing: here 0005, as an index made before records lacks it."""
    import shutil

    from search.engine import Searcher

    copy = shutil.copytree(sample_index, tmp_path / "ix")
    with sqlite3.connect(copy / DATABASE_FILE) as connection:
        connection.execute("DROP TABLE record_metadata")
        connection.execute("ALTER TABLE documents DROP COLUMN metadata_json")
        connection.execute("DELETE FROM migrations WHERE name = '0005_records'")
    connection.close()
    with Searcher(copy) as searcher:
        assert searcher.search("bank", mode="lexical", k=3).results
    with sqlite3.connect(copy / DATABASE_FILE) as connection:
        applied = [row[0] for row in connection.execute("SELECT name FROM migrations")]
    connection.close()
    assert applied == [name for name, _ in MIGRATIONS]
