"""A long-lived reader follows new generations of a folder index at the cost of what
changed: the base it loaded is kept (the same object) while the manifest names it, each
new delta is read alone, and only a merge (a new base) loads a space in full.

Synthetic vectors through the store API (the helpers of `test_segments`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from indexer.store.backends import open_store
from tests.indexer.store.test_segments import (
    document,
    edit_one_passage,
    new_index,
    ranked,
    unit_vectors,
)


def fresh_ranking(folder, queries: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """What a new reader of the folder answers (`ranked`)."""
    fresh = open_store(folder)
    try:
        return ranked(fresh, queries)
    finally:
        fresh.close()


def assert_same_ranking(found: dict, expected: dict) -> None:
    for name in ("contextual", "static"):
        assert np.array_equal(found[name][1], expected[name][1]), name
        assert np.array_equal(found[name][0], expected[name][0]), name


@pytest.fixture
def merged(tmp_path) -> Iterator[tuple]:
    """A writer of a 1,000-passage folder index whose spaces are merged (a base, no
    deltas), and a reader of it that has loaded nothing yet."""
    writer = new_index(tmp_path / "ix", 1_000)
    reader = open_store(tmp_path / "ix")
    try:
        with writer.writer():
            writer.merge_segments()
        yield writer, reader
    finally:
        reader.close()
        writer.close()


def _base_of(store, space: str = "contextual"):
    with store.snapshot([space]) as snapshot:
        return snapshot.spaces[space].base


def test_a_reader_keeps_the_base_it_loaded_until_a_merge(merged):
    writer, reader = merged
    first = _base_of(reader)
    for n in range(3):
        edit_one_passage(writer, f"/d/{n}.txt", 80_000 + n)
        assert _base_of(reader) is first
    with writer.writer():
        writer.merge_segments()
    assert _base_of(reader) is not first


def test_a_reader_keeps_its_base_when_deltas_are_folded(merged, tmp_path, monkeypatch):
    writer, reader = merged
    monkeypatch.setenv("CTXSEARCH_MAX_DELTAS", "2")
    first = _base_of(reader)
    for n in range(5):  # deltas folded at the third and the fifth
        edit_one_passage(writer, f"/d/{n}.txt", 82_000 + n)
        assert _base_of(reader) is first
    queries = unit_vectors(5, seed=9)
    assert_same_ranking(ranked(reader, queries), fresh_ranking(tmp_path / "ix", queries))


def test_a_reader_follows_a_new_generation_without_reading_its_base_again(merged, tmp_path):
    """After a delta is published, the base file is no longer read: a reader that had
    loaded it answers the new generation even if the file could not be read now."""
    writer, reader = merged
    queries = unit_vectors(5, seed=7)
    ranked(reader, queries)  # loads the base
    edit_one_passage(writer, "/d/0.txt", 81_000)
    expected = fresh_ranking(tmp_path / "ix", queries)
    for base in (tmp_path / "ix").glob("*.faiss"):
        base.write_bytes(b"not a FAISS file")
    assert_same_ranking(ranked(reader, queries), expected)


def test_a_snapshot_of_the_old_generation_is_unaffected_by_a_new_one(merged):
    writer, reader = merged
    queries = unit_vectors(20, seed=8)
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
