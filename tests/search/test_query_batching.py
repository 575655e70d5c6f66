"""Concurrent searches: those needing no model run beside an encoding, and the query
encodings of concurrent requests are made in one pass with the same results."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from search.batching import QueryBatcher
from tests.support.serving import running_server

PAUSE = "query-encode:4"  # every pass of query encodings sleeps this long first
# Queries over the sample corpus, several senses of its ambiguous words among them.
QUERIES = (
    "where can I open a savings account at the bank",
    "the python swallowed its prey whole",
    "jaguar engine and leather seats",
    "how do tower cranes stay upright",
    "erosion along the bank after the flood",
    "pitch of a roof",
    "coffee from java",
    "why do dogs bark at night",
)


def hits(response: httpx.Response) -> list[tuple]:
    """What a search answered: each hit's rank, chunk, document and score."""
    assert response.status_code == 200, response.text
    return [
        (hit["rank"], hit["chunk_id"], hit["document_id"], hit["score"])
        for hit in response.json()["results"]
    ]


def same_hits(batched: list[tuple], alone: list[tuple]) -> bool:
    """The same hits in the same order, scores equal up to float rounding: a row of a
    batch differs from a pass of one by about 1e-7, a fused score by about 1e-5."""
    return [hit[:3] for hit in batched] == [hit[:3] for hit in alone] and all(
        abs(a[3] - b[3]) <= 1e-4 for a, b in zip(batched, alone, strict=True)
    )


def test_concurrent_requests_are_encoded_together_with_the_same_hits(
    sample_index, sample_server, tmp_path, monkeypatch
):
    with httpx.Client(base_url=sample_server.url, timeout=120) as client:
        alone = {
            (query, mode): hits(client.get("/search", params={"q": query, "mode": mode}))
            for query in QUERIES
            for mode in ("hybrid", "contextual")
        }
    monkeypatch.setenv("CTXSEARCH_PAUSE_AT", PAUSE)
    log = tmp_path / "server.log"
    with (
        running_server(sample_index, log) as server,
        httpx.Client(
            base_url=server.url, timeout=120, limits=httpx.Limits(max_connections=64)
        ) as client,
        ThreadPoolExecutor(32) as pool,
    ):
        passes_before = log.read_text().count("paused at query-encode")  # the model's warm-up
        first = pool.submit(client.get, "/search", params={"q": QUERIES[0]})
        while log.read_text().count("paused at query-encode") == passes_before:
            threading.Event().wait(0.05)
        # While that pass sleeps: requests needing no model are answered (every search
        # mode, lexical too, encodes the query for each hit's similarity and match) ...
        for path in ("/health", "/info", "/documents/1"):
            assert client.get(path).status_code == 200, path
        assert not first.done()
        # ... and every dense request arriving meanwhile waits for one pass together.
        asked = [(query, mode) for query in QUERIES for mode in ("hybrid", "contextual")]
        answers = [
            pool.submit(client.get, "/search", params={"q": query, "mode": mode})
            for query, mode in asked
        ]
        assert same_hits(hits(first.result()), alone[(QUERIES[0], "hybrid")])
        for (query, mode), answer in zip(asked, answers, strict=True):
            assert same_hits(hits(answer.result()), alone[(query, mode)]), (query, mode)
    passes = log.read_text().count("paused at query-encode") - passes_before
    assert 2 <= passes < 1 + len(asked), passes


@pytest.fixture(scope="module")
def encoders(model):
    from indexer.encoders.spaces import space_encoders

    return space_encoders(model, "mean")


def test_a_batch_gives_each_caller_its_own_row(encoders, monkeypatch):
    monkeypatch.setenv("CTXSEARCH_PAUSE_AT", "query-encode:1")
    batcher = QueryBatcher(encoders.__getitem__)
    asked = [(space, query) for query in QUERIES for space in ("contextual", "static")]
    with ThreadPoolExecutor(len(asked)) as pool:
        vectors = list(pool.map(lambda pair: batcher.encode(*pair), asked))
    assert batcher.largest > 1 and batcher.batches < len(asked)
    for (space, query), vector in zip(asked, vectors, strict=True):
        alone = encoders[space].encode([query])
        assert vector.shape == alone.shape == (1, encoders[space].dim)
        np.testing.assert_allclose(vector, alone, atol=1e-5)


def test_a_failed_pass_fails_every_caller_in_it_and_the_next_pass_works(encoders):
    calls = []

    def flaky(space: str):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the model went away")
        return encoders[space]

    batcher = QueryBatcher(flaky)
    with pytest.raises(RuntimeError, match="went away"):
        batcher.encode("contextual", "river bank")
    vector = batcher.encode("contextual", "river bank")
    np.testing.assert_allclose(vector, encoders["contextual"].encode(["river bank"]), atol=1e-5)
