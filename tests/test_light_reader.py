"""The light reader of a folder index (sqlite3, no SQLAlchemy) reads what the store reads."""

import shutil
import sqlite3

import numpy as np
import pytest

from indexer.store.base import open_reader, open_store
from indexer.store.local.reader import MIGRATION_NAMES, LocalReader, SchemaNotCurrent
from indexer.store.migrations import MIGRATIONS


def test_the_reader_knows_every_migration():
    assert list(MIGRATION_NAMES) == [name for name, _ in MIGRATIONS]


def test_the_reader_and_the_store_read_the_same(sample_index):
    rng = np.random.default_rng(0)
    reader, store = open_reader(sample_index), open_store(sample_index)
    try:
        assert isinstance(reader, LocalReader)
        assert reader.manifest == store.manifest
        with reader.snapshot() as ours, store.snapshot() as theirs:
            for space in ("contextual", "static"):
                queries = rng.standard_normal((3, ours.manifest.dim_of(space))).astype("float32")
                queries /= np.linalg.norm(queries, axis=1, keepdims=True)
                assert ours.vector_search(space, queries, 7) == theirs.vector_search(
                    space, queries, 7
                )
                assert ours.space_size(space) == theirs.space_size(space)
            for text in ("tower crane", "savings account at the bank", "the of and", '"x" OR'):
                assert ours.lexical_search(text, 10) == theirs.lexical_search(text, 10)
            assert ours.counts() == theirs.counts()
            ids = list(range(1, ours.counts()["chunks"] + 5))
            for text in ("tower crane", "savings account at the bank", "the of and"):
                assert ours.lexical_scores(text, ids) == theirs.lexical_scores(text, ids)
            assert ours.chunks(ids) == theirs.chunks(ids)
            for document_id in (1, 2, 10**6):
                assert ours.document(document_id) == theirs.document(document_id)
    finally:
        reader.close()
        store.close()


def test_a_snapshot_loads_only_the_spaces_it_asks_for(sample_index):
    reader = open_reader(sample_index)
    try:
        with reader.snapshot([]) as snapshot:
            assert snapshot.spaces == {} and snapshot.lexical_search("crane", 3)
        with reader.snapshot(["static"]) as snapshot:
            assert set(snapshot.spaces) == {"static"}
    finally:
        reader.close()


def test_an_index_that_needs_a_migration_is_left_to_the_store(sample_index, tmp_path):
    copy = shutil.copytree(sample_index, tmp_path / "ix")
    with sqlite3.connect(copy / "ctxsearch.sqlite") as connection:
        connection.execute("DELETE FROM migrations WHERE name = '0003_hosts_and_roots'")
    connection.close()
    with pytest.raises(SchemaNotCurrent):
        LocalReader(copy)


def test_a_foreign_folder_is_a_clear_error(tmp_path):
    from indexer.errors import IndexNotFound

    with pytest.raises(IndexNotFound, match="no index here"):
        open_reader(tmp_path / "missing")
