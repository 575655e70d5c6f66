"""The Python API other applications embed: Indexer, Searcher and typed errors."""

import pytest

import indexer
import search
from indexer import IndexNotFound, InvalidQuery, ModelMismatch, ModelNotAvailable
from search import Searcher


def test_index_then_search_in_process(tmp_path, notes):
    summary = indexer.Indexer(tmp_path / "ix").index_folder(notes)
    assert summary.added == 4
    with search.Searcher(tmp_path / "ix") as searcher:
        response = searcher.search("where do I keep my savings", k=2)
        assert response.results[0].path.endswith("money.txt")
        assert response.to_dict()["results"][0]["rank"] == 1
        static = searcher.search("where do I keep my savings", k=2, mode="static")
        assert static.mode == "static" and len(static.results) == 2
        older = searcher.search("where do I keep my savings", k=2, space="static")
        assert older.mode == "static", "space= is still accepted as the old name of mode="


def test_contextual_space_resolves_the_sense_of_bank(sample_index):
    with Searcher(sample_index) as searcher:
        money = searcher.search("I want to open a savings account at my bank", k=1)
        river = searcher.search("the bank of the river eroded in the flood", k=1)
    assert "finance/" in money.results[0].path
    assert "nature/" in river.results[0].path


def test_a_dense_weight_moves_hybrid_between_its_parts(sample_index):
    # "response" and "work" are common words; the question is about canning seals
    query = "why did the lids not pop down after the jars cooled"
    with Searcher(sample_index) as searcher:
        # passage by passage (`all_chunks`): documents are scored from their passages with
        # a support per mode (search.document_scores), which a dense weight does not move
        contextual = searcher.search(query, k=5, mode="contextual", all_chunks=True)
        lexical = searcher.search(query, k=5, mode="lexical", all_chunks=True)
        all_dense = searcher.search(query, k=5, dense_weight=1.0, all_chunks=True)
        all_lexical = searcher.search(query, k=5, dense_weight=0.0, all_chunks=True)
        adaptive = searcher.search(query, k=5)
        with pytest.raises(InvalidQuery, match="between 0 and 1"):
            searcher.search(query, dense_weight=1.5)
        with pytest.raises(InvalidQuery, match="only applies to hybrid"):
            searcher.search(query, mode="lexical", dense_weight=0.5)
    assert [h.chunk_id for h in all_dense.results] == [h.chunk_id for h in contextual.results]
    assert [h.chunk_id for h in all_lexical.results] == [h.chunk_id for h in lexical.results]
    assert adaptive.results[0].path.endswith("home-canning-seals.md")
    assert all(hit.space == "hybrid" for hit in adaptive.results)


def test_typed_errors(tmp_path, sample_index):
    with pytest.raises(IndexNotFound):
        Searcher(tmp_path / "missing")
    with pytest.raises(ModelMismatch):
        Searcher(sample_index, pooling="max")
    with pytest.raises(ModelMismatch):
        Searcher(sample_index, model="some/other-model")
    with Searcher(sample_index) as searcher:
        with pytest.raises(InvalidQuery):
            searcher.search("")
        with pytest.raises(InvalidQuery):
            searcher.search("bank", k=-1)
        with pytest.raises(InvalidQuery):
            searcher.search("bank", mode="sparse")
    assert issubclass(InvalidQuery, indexer.CtxsearchError)


def test_a_model_that_is_not_on_disk_is_refused_without_downloading(tmp_path, notes):
    with pytest.raises(ModelNotAvailable, match="cannot load model"):
        indexer.Indexer(tmp_path / "ix", model="nobody/no-such-model").index_folder(notes)
    assert not (tmp_path / "ix").exists()
