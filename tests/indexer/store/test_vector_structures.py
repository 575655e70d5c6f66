"""Vector spaces as exact Flat indexes or HNSW graphs, with tombstones for removals."""

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
