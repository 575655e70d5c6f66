"""A long-lived reader follows new generations of a folder index at the cost of what
changed: the base it loaded is kept (the same object) while the manifest names it, each
new delta is read alone, and only a merge (a new base) loads a space in full.

Synthetic vectors through the store API (the helpers of `test_segments`).
"""

from __future__ import annotations

import numpy as np

from indexer.store.backends import open_store
from tests.indexer.store.test_segments import (
    document,
    edit_one_passage,
    new_index,
    ranked,
    unit_vectors,
)


def _base_of(store, space: str = "contextual"):
    with store.snapshot([space]) as snapshot:
        return snapshot.spaces[space].base


def test_a_reader_keeps_the_base_it_loaded_until_a_merge(tmp_path):
    writer = new_index(tmp_path / "ix", 1_000)
    reader = open_store(tmp_path / "ix")
    try:
        with writer.writer():
            writer.merge_segments()
        first = _base_of(reader)
        for n in range(3):
            edit_one_passage(writer, f"/d/{n}.txt", 80_000 + n)
            assert _base_of(reader) is first
        with writer.writer():
            writer.merge_segments()
        assert _base_of(reader) is not first
    finally:
        reader.close()
        writer.close()


def test_a_reader_keeps_its_base_when_deltas_are_folded(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXSEARCH_MAX_DELTAS", "2")
    writer = new_index(tmp_path / "ix", 1_000)
    reader = open_store(tmp_path / "ix")
    queries = unit_vectors(5, seed=9)
    try:
        with writer.writer():
            writer.merge_segments()
        first = _base_of(reader)
        for n in range(5):  # deltas folded at the third and the fifth
            edit_one_passage(writer, f"/d/{n}.txt", 82_000 + n)
            assert _base_of(reader) is first
        fresh = open_store(tmp_path / "ix")
        expected = ranked(fresh, queries)
        fresh.close()
        found = ranked(reader, queries)
        for name in ("contextual", "static"):
            assert np.array_equal(found[name][1], expected[name][1]), name
            assert np.allclose(found[name][0], expected[name][0]), name
    finally:
        reader.close()
        writer.close()


def test_a_reader_follows_a_new_generation_without_reading_its_base_again(tmp_path):
    """After a delta is published, the base file is no longer read: a reader that had
    loaded it answers the new generation even if the file could not be read now."""
    writer = new_index(tmp_path / "ix", 1_000)
    reader = open_store(tmp_path / "ix")
    queries = unit_vectors(5, seed=7)
    try:
        with writer.writer():
            writer.merge_segments()
        ranked(reader, queries)  # loads the base
        edit_one_passage(writer, "/d/0.txt", 81_000)
        fresh = open_store(tmp_path / "ix")
        expected = ranked(fresh, queries)
        fresh.close()
        for base in (tmp_path / "ix").glob("*.faiss"):
            base.write_bytes(b"not a FAISS file")
        found = ranked(reader, queries)
        for name in ("contextual", "static"):
            assert np.array_equal(found[name][1], expected[name][1]), name
            assert np.array_equal(found[name][0], expected[name][0]), name
    finally:
        reader.close()
        writer.close()


def test_a_snapshot_of_the_old_generation_is_unaffected_by_a_new_one(tmp_path):
    writer = new_index(tmp_path / "ix", 1_000)
    reader = open_store(tmp_path / "ix")
    queries = unit_vectors(20, seed=8)
    try:
        with writer.writer():
            writer.merge_segments()
        edit_one_passage(writer, "/d/0.txt", 82_000)
        with reader.snapshot() as old:
            before = {name: space.search(queries, 10) for name, space in old.spaces.items()}
            size = len(old.spaces["contextual"])
            edit_one_passage(writer, "/d/1.txt", 82_001)
            with writer.writer(), writer.change() as change:
                change.add_documents([document("/d/new.txt", 30, 82_002)])
            with reader.snapshot() as new:
                assert len(new.spaces["contextual"]) == size - 99 + 30
                assert new.spaces["contextual"].base is old.spaces["contextual"].base
            assert len(old.spaces["contextual"]) == size
            for name, space in old.spaces.items():
                scores, ids = space.search(queries, 10)
                assert np.array_equal(ids, before[name][1]) and np.array_equal(
                    scores, before[name][0]
                ), name
    finally:
        reader.close()
        writer.close()
