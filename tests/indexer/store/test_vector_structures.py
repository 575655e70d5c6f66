"""Vector spaces as exact Flat indexes or HNSW graphs, with tombstones for removals."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from indexer import Indexer
from indexer.store.backends import open_store
from indexer.store.index_types import HNSW_FROM_VECTORS, structure_for
from indexer.store.local.vectors import VectorSpace
from search import Searcher
from search.cli import cli

DIM = 16


def unit_vectors(count: int, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def space_of(structure: str, count: int = 500) -> tuple[VectorSpace, np.ndarray]:
    space = VectorSpace(DIM, structure=structure)
    vectors = unit_vectors(count)
    space.add(np.arange(1000, 1000 + count), vectors)
    return space, vectors


def test_auto_is_exact_below_the_threshold_and_a_graph_from_it():
    assert structure_for("auto", HNSW_FROM_VECTORS - 1) == "flat"
    assert structure_for("auto", HNSW_FROM_VECTORS) == "hnsw"
    assert structure_for("flat", 10**9) == "flat"
    assert structure_for("hnsw", 1) == "hnsw"
    with pytest.raises(ValueError, match="unknown index type"):
        structure_for("ivf", 1)


def test_a_small_graph_finds_what_exact_search_finds():
    flat, vectors = space_of("flat")
    graph, _ = space_of("hnsw")
    assert graph.structure == "hnsw" and flat.structure == "flat"
    _, exact = flat.search(vectors[:20], 10)
    _, found = graph.search(vectors[:20], 10)
    assert (found == exact).mean() > 0.95


def test_removed_vectors_become_tombstones_that_searches_skip_and_files_keep(tmp_path):
    graph, vectors = space_of("hnsw")
    assert graph.remove(np.array([1000, 1001, 99999])) == 2
    assert len(graph) == 498 and graph.tombstones() == 2
    assert not {1000, 1001} & set(graph.ids().tolist())
    _, found = graph.search(vectors[:2], 5)
    assert not {1000, 1001} & set(found.ravel().tolist())
    graph.save_to(tmp_path / "space.faiss")
    loaded = VectorSpace(DIM, tmp_path / "space.faiss")
    assert (loaded.structure, len(loaded), loaded.tombstones()) == ("hnsw", 498, 2)
    _, found = loaded.search(vectors[:2], 5)
    assert not {1000, 1001} & set(found.ravel().tolist())


def test_a_graph_crowded_with_tombstones_is_rebuilt_without_them():
    graph, vectors = space_of("hnsw")
    graph.remove(np.arange(1000, 1050))  # 10%: kept
    assert not graph.restructure("hnsw")
    graph.remove(np.arange(1050, 1150))  # 30%: rebuilt
    assert graph.restructure("hnsw")
    assert (graph.tombstones(), len(graph)) == (0, 350)
    _, found = graph.search(vectors[200:201], 1)
    assert found[0, 0] == 1200


def test_restructuring_keeps_every_vector_under_its_id():
    space, vectors = space_of("flat")
    space.remove(np.array([1003]))
    assert space.restructure("hnsw") and space.structure == "hnsw"
    assert space.restructure("flat") and space.structure == "flat"
    ids, stored = space.live_vectors()
    expected = np.delete(np.arange(1000, 1500), 3)
    assert np.array_equal(np.sort(ids), expected)
    assert np.allclose(stored[np.argsort(ids)], np.delete(vectors, 3, axis=0))


def test_index_type_option_switches_an_existing_index_and_back(tmp_path, notes):
    index_dir = tmp_path / "ix"
    Indexer(index_dir).index_folder(notes)
    with Searcher(index_dir) as searcher:
        before = [hit.path for hit in searcher.search("saving money", mode="contextual").results]
    runner = CliRunner()
    result = runner.invoke(
        cli, ["index", str(notes), "--index", str(index_dir), "--index-type", "hnsw"]
    )
    assert result.exit_code == 0, result.output
    store = open_store(index_dir)
    try:
        with store.snapshot() as snapshot:
            assert snapshot.manifest.index_type == "hnsw"
            assert {space.structure for space in snapshot.spaces.values()} == {"hnsw"}
    finally:
        store.close()
    (notes / "money.txt").write_text("Compound interest makes savings grow over decades.\n")
    Indexer(index_dir).index_folder(notes)  # keeps hnsw: the old chunk is a tombstone
    assert runner.invoke(cli, ["verify", "--index", str(index_dir)]).exit_code == 0
    with Searcher(index_dir) as searcher:
        after = [hit.path for hit in searcher.search("saving money", mode="contextual").results]
    assert after[0] == before[0]
    info = runner.invoke(cli, ["info", "--index", str(index_dir), "--json"])
    assert '"vector_structure": "hnsw"' in info.output
    result = runner.invoke(
        cli, ["index", str(notes), "--index", str(index_dir), "--index-type", "auto"]
    )
    assert result.exit_code == 0, result.output
    assert (
        '"vector_structure": "flat"'
        in runner.invoke(cli, ["info", "--index", str(index_dir), "--json"]).output
    )


def published_generation(index_dir) -> int:
    store = open_store(index_dir)
    try:
        return store.manifest.generation
    finally:
        store.close()


def test_a_run_that_changes_nothing_publishes_nothing(tmp_path, notes):
    index_dir = tmp_path / "ix"
    Indexer(index_dir).index_folder(notes)
    generation = published_generation(index_dir)
    (notes / "new.txt").write_bytes(b"\x00binary\x00")  # a new file that fails: no change
    summary = Indexer(index_dir).index_folder(notes)
    assert summary.failed == 1
    assert published_generation(index_dir) == generation


def agree_but_for_ties(found: tuple, exact: tuple, tolerance: float = 1e-5) -> None:
    """The same scores rank by rank, and the same ids wherever no other score ties with
    them (faiss's `contrib.evaluation` habit: a tie may list either id first)."""
    (scores, ids), (exact_scores, exact_ids) = found, exact
    np.testing.assert_allclose(scores, exact_scores, atol=tolerance)
    for row_ids, row_scores, want_ids in zip(ids, exact_scores, exact_ids, strict=True):
        for rank, score in enumerate(row_scores):
            if np.sum(np.abs(row_scores - score) <= tolerance) == 1:
                assert row_ids[rank] == want_ids[rank]
        assert set(row_ids) == set(want_ids) or np.sum(np.diff(row_scores) == 0)


@pytest.mark.parametrize("allowed", [1, 12, 30, 300, 1500, 3012])
def test_a_filtered_graph_search_finds_what_exact_search_finds(allowed):
    """However few vectors a filter allows, a graph returns the k best of them: the hits
    an exact search over the allowed ids returns (a graph walked with few allowed
    neighbours found 6 of 10)."""
    rng = np.random.default_rng(allowed)
    vectors = unit_vectors(3012, seed=1)
    ids = np.arange(1, 3013) * 7
    graph, flat = VectorSpace(DIM, structure="hnsw"), VectorSpace(DIM, structure="flat")
    for space in (graph, flat):
        space.add(ids, vectors)
    kept = np.sort(rng.choice(ids, allowed, replace=False))
    queries = unit_vectors(20, seed=allowed + 2)
    found = graph.search(queries, 10, kept)
    assert (found[1] >= 0).sum(axis=1).tolist() == [min(10, allowed)] * 20
    agree_but_for_ties(found, flat.search(queries, 10, kept))


def test_a_wide_filter_walks_the_graph_and_a_short_walk_is_scored_exactly():
    """A filter that keeps most of a large graph is searched by walking it (deeper by the
    share it keeps); when few of the allowed ids are in the space (its vectors not yet
    written), the walk comes back short and the allowed vectors are scored exactly."""
    vectors = unit_vectors(20_000, seed=3)
    ids = np.arange(1, 20_001)
    graph, flat = VectorSpace(DIM, structure="hnsw"), VectorSpace(DIM, structure="flat")
    for space in (graph, flat):
        space.add(ids, vectors)
    queries = unit_vectors(20, seed=4)
    wide = ids[2_000:]
    _, found = graph.search(queries, 10, wide)
    _, exact = flat.search(queries, 10, wide)
    recall = np.mean([len(set(a) & set(b)) for a, b in zip(found, exact, strict=True)]) / 10
    assert (found >= 0).all() and recall > 0.9
    elsewhere = np.concatenate([ids[100:130], np.arange(10**6, 10**6 + 15_000)])
    agree_but_for_ties(graph.search(queries, 10, elsewhere), flat.search(queries, 10, elsewhere))


def test_a_filtered_graph_search_after_removals_finds_k_live_hits():
    graph, vectors = space_of("hnsw", 3012)
    graph.remove(np.arange(1000, 1400))
    kept = np.arange(1390, 1420)  # 10 removed, 20 live
    _, found = graph.search(vectors[:5], 15, kept)
    assert all(set(row) <= set(range(1400, 1420)) and len(set(row)) == 15 for row in found)


def test_a_narrow_folder_of_a_large_graph_index_gets_k_hits(tmp_path, fast_model):
    """3,000 files and 12 in one folder, searched under that folder with -k 10: 10 hits,
    as an exact index finds."""
    rng = np.random.default_rng(5)
    words = [f"word{n}" for n in range(400)]
    tree = tmp_path / "tree"
    for folder, count in (("big", 3000), ("small", 12)):
        (tree / folder).mkdir(parents=True)
        for n in range(count):
            text = " ".join(rng.choice(words, 12))
            (tree / folder / f"{n:04d}.txt").write_text(f"{text}\n")
    hits = {}
    for structure in ("hnsw", "flat"):
        index = tmp_path / structure
        arguments = ["index", str(tree), "--index", str(index), "--model", fast_model]
        result = CliRunner().invoke(cli, [*arguments, "--index-type", structure, "--quiet"])
        assert result.exit_code == 0, result.output
        query = ["query", "word1 word2 word3", "--index", str(index), "-k", "10", "--json"]
        result = CliRunner().invoke(
            cli, [*query, "--mode", "contextual", "--under", str(tree / "small")]
        )
        assert result.exit_code == 0, result.output
        found = json.loads(result.stdout)["results"]
        hits[structure] = [(hit["similarity"], hit["path"]) for hit in found]
    assert len(hits["hnsw"]) == 10  # the same similarities; tied files in either order
    assert [s for s, _ in hits["hnsw"]] == pytest.approx([s for s, _ in hits["flat"]], abs=1e-5)
