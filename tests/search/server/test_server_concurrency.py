"""Concurrent HTTP requests while `ctxsearch index` publishes a new generation."""

from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.support.crash_harness import (
    QUERIES,
    index_before_and_after_a_change,
    start_indexer_process,
)
from tests.support.serving import running_server

MODES = ("lexical", "static", "contextual", "hybrid")
CLIENTS = 8


def test_requests_during_an_index_run_all_answer_the_old_or_the_new_state(tmp_path, tiny_model_dir):
    folder, index_dir, old, new = index_before_and_after_a_change(tmp_path, tiny_model_dir)
    assert old != new

    def ask(client: httpx.Client, query: str, mode: str) -> str:
        response = client.get("/search", params={"q": query, "k": 5, "mode": mode})
        assert response.status_code == 200, response.text
        observed = [
            (hit["path"], hit["start"], hit["end"], round(hit["score"], 4))
            for hit in response.json()["results"]
        ]
        if observed == old[(query, mode)]:
            return "old"
        if not response.json()["completeness"]["contextual_complete"]:
            # a state the run's fill publishes on its way: every new passage in the
            # lexical and static spaces, some in the contextual one
            if mode in ("lexical", "static"):
                assert observed == new[(query, mode)], (query, mode)
            return "filling"
        assert observed == new[(query, mode)], (query, mode)
        return "new"

    seen = {"old": 0, "new": 0, "filling": 0}
    with (
        running_server(index_dir, tmp_path / "server.log") as server,
        httpx.Client(base_url=server.url, timeout=120) as client,
        ThreadPoolExecutor(CLIENTS) as pool,
    ):
        ask(client, QUERIES[0], "hybrid")  # load the model first: a busy machine may
        # otherwise take longer to load it than the writer takes to publish
        writer = start_indexer_process(
            index_dir, folder, tiny_model_dir, env={"CTXSEARCH_PAUSE_AT": "after-batch:0.5"}
        )
        while True:
            finished = writer.poll() is not None
            requests = [(query, mode) for query in QUERIES for mode in MODES] * 2
            for outcome in pool.map(lambda pair: ask(client, *pair), requests):
                seen[outcome] += 1
            if finished:
                break
    assert writer.returncode == 0, writer.stderr.read()
    assert seen["old"] > 0 and seen["new"] > 0, seen
