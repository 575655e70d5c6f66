"""The index store: SQL round trip, FAISS ids, manifest checks, migrations, reconciliation."""

import sqlite3

import numpy as np
import pytest
from sqlalchemy import create_engine, inspect

from indexer.chunking import Chunk
from indexer.errors import IndexCorrupt, IndexNotFound, ModelMismatch
from indexer.sources import Document
from indexer.store.index import StoredIndex
from indexer.store.layout import DATABASE_FILE
from indexer.store.manifest import Manifest
from indexer.store.migrations import MIGRATIONS, migrate, pending
from indexer.store.schema import Base, DocumentRow

DIM = 4


def manifest() -> Manifest:
    return Manifest(
        model="test/model",
        model_fingerprint="abc",
        pooling="mean",
        dim=DIM,
        max_tokens=16,
        chunk_tokens=14,
        chunk_overlap=2,
        version="test",
    )


def document(path: str, text: str) -> Document:
    return Document(path=path, text=text, size=len(text), mtime_ns=1, sha256="0" * 64)


def add(index: StoredIndex, path: str, texts: list[str]) -> list[int]:
    chunks = [Chunk(i, 0, len(t), t) for i, t in enumerate(texts)]
    with index.writing() as session:
        ids = index.metadata.add_document(session, document(path, " ".join(texts)), chunks)
        vectors = np.eye(DIM, dtype=np.float32)[: len(ids)]
        for space in index.spaces.values():
            space.add(np.asarray(ids), vectors)
    return ids


def test_round_trip_through_sql_and_faiss(tmp_path):
    index = StoredIndex.create(tmp_path / "ix", manifest())
    ids = add(index, "/docs/a.txt", ["alpha", "beta"])
    index.close()

    reopened = StoredIndex.open(tmp_path / "ix")
    assert reopened.manifest == index.manifest
    assert reopened.metadata.counts() == {"documents": 1, "chunks": 2}
    for space in reopened.spaces.values():
        assert sorted(space.ids().tolist()) == sorted(ids)
        scores, found = space.search(np.eye(DIM, dtype=np.float32)[1:2], 1)
        assert found[0][0] == ids[1] and scores[0][0] == pytest.approx(1.0)
    chunks = reopened.metadata.chunks(ids)
    assert [chunks[i].text for i in ids] == ["alpha", "beta"]
    assert chunks[ids[0]].path == "/docs/a.txt"
    reopened.close()


def test_chunk_ids_are_never_reused_after_deletion(tmp_path):
    index = StoredIndex.create(tmp_path / "ix", manifest())
    first = add(index, "/docs/a.txt", ["one", "two"])
    document_id = index.metadata.documents_under("/docs")["/docs/a.txt"].id
    with index.metadata.transaction() as session:
        removed = index.metadata.delete_documents(session, [document_id])
    assert sorted(removed) == sorted(first)
    second = add(index, "/docs/b.txt", ["three"])
    assert min(second) > max(first)
    index.close()


def test_deleting_a_document_cascades_to_its_chunks(tmp_path):
    index = StoredIndex.create(tmp_path / "ix", manifest())
    add(index, "/docs/a.txt", ["one", "two"])
    document_id = index.metadata.documents_under("/docs")["/docs/a.txt"].id
    with index.metadata.transaction() as session:
        session.delete(session.get(DocumentRow, document_id))
    assert index.metadata.counts() == {"documents": 0, "chunks": 0}
    index.close()


def test_documents_under_matches_a_folder_prefix_only(tmp_path):
    index = StoredIndex.create(tmp_path / "ix", manifest())
    add(index, "/docs/a.txt", ["x"])
    add(index, "/docs2/b.txt", ["y"])
    add(index, "/d_cs/c.txt", ["z"])
    assert list(index.metadata.documents_under("/docs")) == ["/docs/a.txt"]
    assert list(index.metadata.documents_under("/d_cs")) == ["/d_cs/c.txt"]
    index.close()


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
        StoredIndex.open(tmp_path / "nothing")
    (tmp_path / "folder").mkdir()
    with pytest.raises(IndexNotFound, match="not a ctxsearch index"):
        StoredIndex.open(tmp_path / "folder")


def test_create_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("precious")
    with pytest.raises(IndexNotFound, match="not empty"):
        StoredIndex.create(tmp_path / "notes", manifest())
    assert (tmp_path / "notes" / "keep.txt").read_text() == "precious"


def test_corrupt_database_and_faiss_files_are_reported(tmp_path):
    index = StoredIndex.create(tmp_path / "ix", manifest())
    add(index, "/docs/a.txt", ["x"])
    index.close()
    (tmp_path / "ix" / "static-000001.faiss").write_bytes(b"not faiss")
    with pytest.raises(IndexCorrupt, match="unreadable FAISS"):
        StoredIndex.open(tmp_path / "ix")
    (tmp_path / "ix" / DATABASE_FILE).write_bytes(b"not sqlite" * 100)
    with pytest.raises(IndexCorrupt, match="SQLite"):
        StoredIndex.open(tmp_path / "ix")


def test_a_failed_write_publishes_nothing_and_leaves_no_files(tmp_path):
    index = StoredIndex.create(tmp_path / "ix", manifest())
    kept = add(index, "/docs/a.txt", ["kept"])
    files_before = sorted(p.name for p in (tmp_path / "ix").iterdir())
    with pytest.raises(RuntimeError), index.writing() as session:
        index.metadata.add_document(
            session, document("/docs/b.txt", "lost"), [Chunk(0, 0, 4, "lost")]
        )
        index.spaces["static"].add(np.asarray([999]), np.ones((1, DIM), dtype=np.float32))
        raise RuntimeError("crash in the middle of a run")
    index.close()
    reopened = StoredIndex.open(tmp_path / "ix")
    assert reopened.metadata.chunk_ids() == set(kept)
    for space in reopened.spaces.values():
        assert set(space.ids().tolist()) == set(kept)
    assert sorted(p.name for p in (tmp_path / "ix").iterdir()) == files_before
    reopened.close()


def test_each_write_publishes_the_next_generation_and_sweeps_the_old(tmp_path):
    index = StoredIndex.create(tmp_path / "ix", manifest())
    reader = StoredIndex.open(tmp_path / "ix")
    assert index.manifest.generation == reader.manifest.generation == 0
    add(index, "/docs/a.txt", ["one"])
    add(index, "/docs/b.txt", ["two"])
    assert index.manifest.generation == 2
    faiss_files = sorted(p.name for p in (tmp_path / "ix").glob("*.faiss"))
    assert faiss_files == ["contextual-000002.faiss", "static-000002.faiss"]
    assert reader.refresh() is True and reader.manifest.generation == 2
    assert len(reader.spaces["static"]) == 2
    assert reader.refresh() is False
    index.close()
    reader.close()


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


def test_the_lexical_migration_indexes_chunks_already_stored(tmp_path):
    from sqlalchemy import text

    from indexer.store.lexical import SqliteLexicalSpace
    from indexer.store.migrations import _m0001_initial

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
        assert migrate(connection) == ["0002_lexical_space"]
    assert SqliteLexicalSpace(engine).search("otter", 5)[0][0] == 7
    engine.dispose()
