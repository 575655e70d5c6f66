"""A reader's layered space (the base, each delta laid over it) answers as the merged
space does: the base with every delta replayed on it (`load_space`, what a merge saves).

Generated histories of deltas (removals, additions, an id removed and added again with
another vector) over each structure. A flat float32 space must give the very same scores
and ids in the same order, except which of several equal vectors fill the last places
kept (FAISS's own choice there depends on what it scanned after them): many vectors here
are equal. An HNSW graph and the quantized spaces at sizes where the merged space's
search is exact too (the graph's efSearch reaches every node, the codes' candidates are
every vector). Read both in full at each generation, and by following: the previous
generation's object with only the new delta read.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import faiss
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.store.local.index_files import delta_file, space_file
from indexer.store.local.layered import read_space
from indexer.store.local.segments import (
    Segments,
    folded_delta,
    load_space,
    read_delta,
    write_delta,
)
from indexer.store.local.vectors import VectorSpace

DIM = 16
SPACE = "contextual"
K = 10
HISTORIES = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# The most vectors a structure holds here: where its search is exact (HNSW's efSearch is
# 128; int8 re-scores 40 candidates for k = 10, binary 500).
EXACT_SIZES = {"flat": 300, "hnsw": 120, "flat-int8": 40, "hnsw-int8": 40, "flat-binary": 120}


@pytest.fixture(autouse=True)
def one_faiss_thread():
    """Searches of a few queries on one thread: on a busy machine, OpenMP's threads make
    each tiny search wait for the slowest core."""
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(threads)


def vectors_of(seeds: list[int]) -> np.ndarray:
    """One unit vector per seed: equal seeds, equal vectors (ties)."""
    rows = [np.random.default_rng(seed).standard_normal(DIM) for seed in seeds]
    matrix = np.asarray(rows, dtype=np.float32).reshape(len(seeds), DIM)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


@st.composite
def histories(draw, size: int, distinct: bool):
    """A base's seeds, then deltas as (removed ids, [(added id, seed)]): fresh ids,
    ids of the base or of an earlier delta removed, and removed ids added again.
    `distinct`: every vector another; else each one of 6 (many ties)."""
    counter = itertools.count()

    def seed() -> int:
        return next(counter) if distinct else draw(st.integers(0, 5))

    base = [seed() for _ in range(draw(st.integers(1, size * 2 // 3)))]
    live, next_id, deltas = set(range(1, len(base) + 1)), len(base) + 1, []
    for _ in range(draw(st.integers(1, 4))):
        removed = draw(st.sets(st.sampled_from(sorted(live)))) if live else set()
        removed |= draw(st.sets(st.integers(next_id, next_id + 3), max_size=1))  # unknown
        again = draw(st.sets(st.sampled_from(sorted(removed)))) if removed else set()
        room = size - len(live - removed) - len(again)
        fresh = list(range(next_id + 4, next_id + 4 + draw(st.integers(0, max(0, min(8, room))))))
        next_id += 4 + len(fresh)
        added = [(i, seed()) for i in sorted(again) + fresh]
        live = (live - removed) | {i for i, _ in added}
        deltas.append((sorted(removed), added))
    return base, deltas


def publish(folder: Path, structure: str, base: list[int], deltas) -> list[Segments]:
    """Write the base and each delta; the segments of each generation."""
    ids = np.arange(1, len(base) + 1, dtype=np.int64)
    built = VectorSpace.built(DIM, structure, ids, vectors_of(base))
    built.save_to(space_file(folder, SPACE, 1))
    generations = [Segments(base=1, structure=structure)]
    for generation, (removed, added) in enumerate(deltas, start=2):
        write_delta(
            delta_file(folder, SPACE, generation),
            np.asarray(removed, dtype=np.int64),
            np.asarray([i for i, _ in added], dtype=np.int64),
            vectors_of([seed for _, seed in added]),
        )
        last = generations[-1]
        generations.append(Segments(base=1, deltas=[*last.deltas, generation], structure=structure))
    return generations


def assert_same_answers(layered, merged, queries: np.ndarray, exact_order: bool) -> None:
    assert len(layered) == len(merged)
    assert sorted(layered.ids().tolist()) == sorted(merged.ids().tolist())
    # Filters as the SQL store makes them: of live ids, and of ids no space holds yet.
    live = np.sort(merged.ids())
    absent = np.arange(10**6, 10**6 + 3)  # ids no history here reaches
    allowed_sets = [None, live[::2], np.concatenate([live[1::3], absent]), live[:3], absent]
    for allowed in allowed_sets:
        found = layered.ranked(queries, K, allowed)
        wanted = merged.ranked(queries, K, allowed)
        if exact_order:
            every = merged.ranked(queries, len(merged), allowed)
            for row in range(len(queries)):
                assert_same_up_to_last_ties(found[row], wanted[row], every[row])
        else:  # no ties; scores computed by another structure: equal to float32 rounding
            assert [[i for i, _ in row] for row in found] == [[i for i, _ in row] for row in wanted]
            assert np.allclose(
                [s for row in found for _, s in row],
                [s for row in wanted for _, s in row],
                atol=1e-6,
            )
        assert (
            layered.search(queries, K, allowed)[1].shape
            == merged.search(queries, K, allowed)[1].shape
        )
    some = [*live.tolist(), *absent.tolist(), 0]
    assert layered.vectors(some).keys() == merged.vectors(some).keys()
    for chunk_id, vector in merged.vectors(some).items():
        assert np.array_equal(layered.vectors([chunk_id])[chunk_id], vector)
    similar = layered.similarities(queries[0], some)
    assert similar.keys() == merged.similarities(queries[0], some).keys()


def assert_same_up_to_last_ties(found: list, wanted: list, every: list) -> None:
    """The same (id, score) list, but for which of the ids scoring as the last one kept
    fill its places (`every`: the merged space's whole ranking)."""
    assert [s for _, s in found] == [s for _, s in wanted]
    if not wanted:
        return
    last = wanted[-1][1]
    assert [h for h in found if h[1] != last] == [h for h in wanted if h[1] != last]
    tied = {i for i, s in every if s == last}
    assert {i for i, s in found if s == last} <= tied


def check(folder: Path, structure: str, history, exact_order: bool) -> None:
    generations = publish(folder, structure, *history)
    seeds = [seed for seed in history[0][:3]] + [7, 8]
    queries = vectors_of(seeds)
    followed = read_space(folder, SPACE, DIM, generations[0])
    for segments in generations:
        merged = load_space(folder, SPACE, DIM, segments)
        followed = read_space(folder, SPACE, DIM, segments, followed)
        fresh = read_space(folder, SPACE, DIM, segments)
        for layered in (followed, fresh):
            assert_same_answers(layered, merged, queries, exact_order)
        if len(segments.deltas) >= 2:  # the same generation with its young deltas folded
            folded = fold_all_but_the_first(folder, segments)
            by_following = read_space(folder, SPACE, DIM, folded, followed)
            assert by_following.base is followed.base
            replayed = load_space(folder, SPACE, DIM, folded)
            for space in (by_following, read_space(folder, SPACE, DIM, folded), replayed):
                assert_same_answers(space, merged, queries, exact_order)


def fold_all_but_the_first(folder: Path, segments: Segments) -> Segments:
    """`segments` with every delta after the first folded into one (`folded_delta`)."""
    generation = 100 + segments.deltas[-1]
    parts = [read_delta(delta_file(folder, SPACE, g), DIM) for g in segments.deltas[1:]]
    write_delta(delta_file(folder, SPACE, generation), *folded_delta(parts))
    deltas = [segments.deltas[0], generation]
    return Segments(base=segments.base, deltas=deltas, structure=segments.structure)


@HISTORIES
@given(history=histories(size=EXACT_SIZES["flat"], distinct=False))
def test_a_flat_layered_space_answers_exactly_as_the_merged_one_ties_included(
    tmp_path_factory, history
):
    check(tmp_path_factory.mktemp("flat"), "flat", history, exact_order=True)


@HISTORIES
@given(history=histories(size=EXACT_SIZES["hnsw"], distinct=True))
def test_an_hnsw_layered_space_answers_as_the_merged_graph_where_both_are_exact(
    tmp_path_factory, history
):
    check(tmp_path_factory.mktemp("hnsw"), "hnsw", history, exact_order=False)


QUANTIZED = ["flat-int8", "hnsw-int8", "flat-binary"]


@HISTORIES
@given(
    case=st.sampled_from(QUANTIZED).flatmap(
        lambda structure: histories(size=EXACT_SIZES[structure], distinct=True).map(
            lambda history: (structure, history)
        )
    )
)
def test_a_quantized_layered_space_answers_as_the_merged_one_where_both_are_exact(
    tmp_path_factory, case
):
    structure, history = case
    check(tmp_path_factory.mktemp("quantized"), structure, history, exact_order=False)


def test_a_generation_read_by_following_shares_the_base_and_leaves_the_old_one_as_it_was(
    tmp_path,
):
    history = ([1, 2, 3, 4, 5], [([1, 2], [(2, 9), (10, 1)]), ([10], [(11, 4)])])
    generations = publish(tmp_path, "flat", *history)
    first = read_space(tmp_path, SPACE, DIM, generations[1])
    before = first.search(vectors_of([1, 9]), K)
    second = read_space(tmp_path, SPACE, DIM, generations[2], first)
    assert second.base is first.base
    assert sorted(second.ids().tolist()) == [2, 3, 4, 5, 11]
    assert sorted(first.ids().tolist()) == [2, 3, 4, 5, 10]
    after = first.search(vectors_of([1, 9]), K)
    assert np.array_equal(before[1], after[1]) and np.array_equal(before[0], after[0])
