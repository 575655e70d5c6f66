"""Several queries in one request (issue 27 item 7, txtai's `batchsearch`):
`POST /search/batch` answers one `/search` response per query, in order, the queries
encoded together in one pass; too many queries is a clear 422."""

from __future__ import annotations

import httpx
import pytest

from indexer.errors import InvalidQuery
from indexer.runs.indexer import Indexer
from search.engine import Searcher
from search.limits import MAX_BATCH_QUERIES
from tests.search.test_query_batching import same_hits

QUERIES = ["open a savings account", "tower crane stability", "python swallowed its prey"]


def test_a_batch_answers_what_each_query_answers_alone(sample_server):
    with httpx.Client(base_url=sample_server.url, timeout=120) as client:
        options = {"k": 3, "mode": "hybrid", "type": "md"}
        batch = client.post("/search/batch", json={"queries": QUERIES, **options})
        assert batch.status_code == 200, batch.text
        answers = batch.json()["results"]
        assert [answer["query"] for answer in answers] == QUERIES
        for query, answer in zip(QUERIES, answers, strict=True):
            alone = client.post("/search", json={"q": query, **options}).json()
            assert set(answer) == set(alone)
            assert answer["filters"] == alone["filters"]
            assert same_hits(
                [
                    (h["rank"], h["chunk_id"], h["document_id"], h["score"])
                    for h in answer["results"]
                ],
                [
                    (h["rank"], h["chunk_id"], h["document_id"], h["score"])
                    for h in alone["results"]
                ],
            )


def test_too_many_or_no_queries_or_a_bad_one_is_a_clear_4xx(sample_server):
    url = f"{sample_server.url}/search/batch"
    many = httpx.post(url, json={"queries": ["otters"] * (MAX_BATCH_QUERIES + 1)}, timeout=60)
    assert many.status_code == 422
    assert f"at most {MAX_BATCH_QUERIES} queries" in many.json()["detail"]
    for body, words in (
        ({"queries": []}, "at least one query"),
        ({"queries": "otters"}, "queries"),
        ({"queries": ["otters", " "]}, "query 2"),
        ({"queries": ["otters"], "q": "otters"}, "q"),
        ({"queries": ["otters"], "k": 0}, "k"),
        ({"queries": ["otters"], "where": ["year>>2"]}, "year>>2"),
    ):
        refused = httpx.post(url, json=body, timeout=60)
        assert refused.status_code == 422, (body, refused.text)
        assert words in refused.json()["detail"], (body, refused.text)


def test_the_queries_of_a_batch_are_encoded_in_one_pass(tmp_path, tiny_model_dir, notes):
    target = tmp_path / "ix"
    Indexer(target, model=str(tiny_model_dir)).index_folder(notes)
    with Searcher(target, query_encoder="torch") as searcher:
        searcher.search("warm up", mode="contextual")
        before = searcher._batcher.batches
        answers = searcher.search_batch(["otters", "herons", "rivers", "fish"], k=2)
        assert searcher._batcher.batches == before + 1 and searcher._batcher.largest == 4
        assert [answer.query for answer in answers] == ["otters", "herons", "rivers", "fish"]
        alone = searcher.search("herons", k=2)
        assert [h.chunk_id for h in answers[1].results] == [h.chunk_id for h in alone.results]
        with pytest.raises(InvalidQuery, match=f"at most {MAX_BATCH_QUERIES} queries"):
            searcher.search_batch(["otters"] * (MAX_BATCH_QUERIES + 1))
