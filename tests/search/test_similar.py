"""More like this (issue 27 item 2): `Searcher.similar` and `ctxsearch similar`, from
stored vectors, over the sample corpus's index."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from indexer.errors import DocumentNotFound, InvalidQuery
from search.cli import cli
from search.cli.shown_similarity import shown_similarity
from search.engine import Searcher
from tests.conftest import SAMPLE_CORPUS

SAVINGS = str(SAMPLE_CORPUS / "finance" / "savings-accounts.md")
PYTHONS = str(SAMPLE_CORPUS / "nature" / "pythons-constrictors.md")


def test_a_document_is_searched_with_the_mean_of_its_stored_passage_vectors(sample_index):
    with Searcher(sample_index) as searcher:
        response = searcher.similar(SAVINGS, k=5)
        item = response.item
        assert item.vector == "document mean" and item.passages == len(item.chunk_ids) > 1
        with searcher.store.snapshot(["contextual"]) as snapshot:
            [mean] = _mean(snapshot, item.chunk_ids)
            expected = snapshot.vector_search("contextual", mean[None, :], 40)[0]
    paths = [hit.path for hit in response.results]
    assert SAVINGS not in paths and len(paths) == len(set(paths)) == 5
    assert paths[0].endswith("finance/bank-branch-services.html")
    # the scores are the cosines of the mean vector: what a search with it ranks first
    best = {}
    for chunk_id, score in expected:
        best.setdefault(chunk_id, score)
    for hit in response.results:
        assert hit.score == pytest.approx(best[hit.chunk_id], abs=1e-5)
        assert hit.similarity == hit.score  # contextual mode: the same cosine
    assert [hit.rank for hit in response.results] == [1, 2, 3, 4, 5]


def test_a_line_names_the_passage_searched_with_its_own_vector(sample_index):
    with Searcher(sample_index) as searcher:
        whole = searcher.similar(SAVINGS, k=3)
        last = max(c.end_line for c in _chunks(searcher, SAVINGS))
        passage = searcher.similar(SAVINGS, line=last, k=3)
        by_id = searcher.similar(chunk_id=passage.item.chunk_ids[0], k=3)
    assert passage.item.vector == "passage" and passage.item.chunk_ids[0] in whole.item.chunk_ids
    assert passage.item.line <= last <= passage.item.end_line
    assert [h.chunk_id for h in by_id.results] == [h.chunk_id for h in passage.results]
    assert all(hit.path != SAVINGS for hit in passage.results)


def test_static_mode_and_filters_and_all_chunks(sample_index):
    with Searcher(sample_index) as searcher:
        static = searcher.similar(PYTHONS, mode="static", k=4, path="*.md")
        filtered = searcher.similar(PYTHONS, k=10, under=str(SAMPLE_CORPUS / "finance"))
        strong = searcher.similar(PYTHONS, k=10, min_similarity=0.3)
        passages = searcher.similar(SAVINGS, k=8, all_chunks=True)
        own = set(passages.item.chunk_ids)
        with searcher.store.snapshot(["contextual"]) as snapshot:
            [vector] = _mean(snapshot, passages.item.chunk_ids)
            ranked = snapshot.vector_search("contextual", vector[None, :], 20)[0]
    assert static.mode == "static" and len(static.results) == 4
    assert all(hit.path.endswith(".md") and hit.space == "static" for hit in static.results)
    # static ranks by the static space; similarity stays the contextual cosine
    assert any(hit.similarity != hit.score for hit in static.results)
    assert filtered.results and all("/finance/" in hit.path for hit in filtered.results)
    assert filtered.to_dict()["filters"]["under"] == [str(SAMPLE_CORPUS / "finance")]
    assert strong.results and all(hit.similarity >= 0.3 for hit in strong.results)
    # all_chunks: the nearest passages of other documents, however many per document
    assert [h.chunk_id for h in passages.results] == [i for i, _ in ranked if i not in own][:8]


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"item": "/no/such/file.md"}, DocumentNotFound, "no such document in the index"),
        ({"item": PYTHONS, "line": 10_000}, InvalidQuery, "line 10000 is past the end"),
        ({"item": PYTHONS, "line": 0}, InvalidQuery, "line must be a whole number"),
        ({"item": PYTHONS, "mode": "hybrid"}, InvalidQuery, "need query text"),
        ({"item": PYTHONS, "k": 0}, InvalidQuery, "k must be"),
        ({"chunk_id": 10**12}, DocumentNotFound, "no passage with chunk_id"),
        ({}, InvalidQuery, "give the item"),
        ({"item": PYTHONS, "chunk_id": 1}, InvalidQuery, "give the item"),
    ],
)
def test_bad_items_raise_typed_errors(sample_index, arguments, error, message):
    with Searcher(sample_index) as searcher, pytest.raises(error, match=message):
        searcher.similar(**arguments)


def test_the_command_shows_neighbours_and_refuses_bad_items_in_one_line(sample_index):
    runner = CliRunner()
    index = ["--index", str(sample_index)]
    shown = runner.invoke(cli, ["similar", SAVINGS, *index, "-k", "3", "--json"])
    assert shown.exit_code == 0, shown.output
    answer = json.loads(shown.stdout)
    assert answer["item"]["vector"] == "document mean" and len(answer["results"]) == 3
    assert {"path", "line", "heading", "snippet", "similarity"} <= set(answer["results"][0])
    table = runner.invoke(cli, ["similar", f"{PYTHONS}:3", *index, "-k", "2"])
    assert table.exit_code == 0 and "sim  location" in table.stdout
    assert "(passage)" in table.stderr
    for bad, message in (
        ("/no/such/file.md", "no such document in the index"),
        (f"{PYTHONS}:9999", "line 9999 is past the end of its text"),
    ):
        refused = runner.invoke(cli, ["similar", bad, *index])
        assert refused.exit_code == 2 and message in refused.stderr
        assert "Traceback" not in refused.output


def _chunks(searcher: Searcher, path: str):
    with searcher.store.snapshot() as snapshot:
        [document] = snapshot.documents_at(path)
        return snapshot.document(document.id)[1]


def _mean(snapshot, chunk_ids: list[int]) -> list[np.ndarray]:
    stored = snapshot.vectors("contextual", chunk_ids)
    mean = np.mean([stored[i] for i in chunk_ids], axis=0)
    return [mean / np.linalg.norm(mean)]


def test_similar_records_on_every_store(any_index, tiny_model_dir):
    from indexer.runs.indexer import Indexer

    records = [
        {"id": "a", "text": "Refunds take five days.", "metadata": {"lang": "en"}},
        {"id": "b", "text": "Refunds take five working days.", "metadata": {"lang": "en"}},
        {"id": "c", "text": "Rückerstattungen dauern fünf Tage.", "metadata": {"lang": "de"}},
    ]
    Indexer(any_index, model=str(tiny_model_dir)).upsert_records(records)
    with Searcher(any_index) as searcher:
        near = searcher.similar("record:a", k=5)
        german = searcher.similar("record:a", k=5, where={"lang": "de"})
        by_line = searcher.similar("record:b", line=1, mode="static")
    assert [hit.id for hit in near.results] == ["b", "c"], "b is the closer text; a is left out"
    assert near.results[0].similarity > near.results[1].similarity
    assert [hit.id for hit in german.results] == ["c"]
    assert by_line.item.vector == "passage" and {h.id for h in by_line.results} == {"a", "c"}


def test_the_table_rounds_score_and_similarity_down_alike(sample_index):
    """In contextual mode a neighbour's score is its similarity: the table showed it
    rounded to nearest in one column and down in the other (0.6096 as 0.610 and 0.60)."""
    runner = CliRunner()
    arguments = ["similar", SAVINGS, "--index", str(sample_index), "-k", "8"]
    answer = json.loads(runner.invoke(cli, [*arguments, "--json"]).stdout)
    table = runner.invoke(cli, arguments)
    assert table.exit_code == 0, table.output
    rows = [line.split() for line in table.stdout.splitlines() if line[:3].strip().isdigit()]
    assert len(rows) == len(answer["results"]) == 8
    for (_, score, similarity, _), hit in zip(rows, answer["results"], strict=True):
        assert score == shown_similarity(hit["score"], digits=3)
        assert score.startswith(similarity)
