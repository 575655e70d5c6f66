"""`mcp --http --writable` queues writes as `serve --writable` does: a search answers
while writes wait, and the writes past the queue's room are refused at once. A real
server process, its writer held at a named point until the test lets it go."""

from __future__ import annotations

import os

import anyio
from mcp.types import CallToolResult

from indexer import Indexer
from search.server.write_queue import MAX_WAITING_WRITES
from tests.search.server.test_server_writes import records, release
from tests.support.mcp_client import http_server, http_session

WRITES = 50
# How long to wait for what the server owes at once; a server that makes the search
# wait behind the writes never answers while they are held: the wait ends the test.
NEVER_ANSWERED = 60


def test_a_search_answers_while_writes_wait_and_a_full_queue_refuses_at_once(
    tmp_path, tiny_model_dir, monkeypatch
):
    index = tmp_path / "app.idx"
    Indexer(index, model=str(tiny_model_dir)).upsert_records(records(0, 4, "en"))
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    monkeypatch.setenv("CTXSEARCH_HOLD_AT", f"after-batch:{gate}")
    said: list[str] = []
    answers: dict[int, CallToolResult] = {}

    async def session_test(url: str) -> None:
        async with http_session(url) as session:

            async def write(n: int) -> None:
                arguments = {"records": records(n, n + 1, "queued")}
                answers[n] = await session.call_tool("upsert_records", arguments)

            async with anyio.create_task_group() as writes:
                writes.start_soon(write, 100)  # held at after-batch until the gate opens
                with anyio.fail_after(NEVER_ANSWERED):
                    while not any("held at after-batch" in line for line in said):
                        await anyio.sleep(0.05)
                for n in range(200, 200 + WRITES):
                    writes.start_soon(write, n)
                with anyio.fail_after(NEVER_ANSWERED):
                    found = await session.call_tool("search", {"query": "refund", "k": 10})
                assert not found.is_error, found.content[0].text
                hits = found.structured_content["results"]
                assert sorted(hit["id"] for hit in hits) == [f"faq-{n}" for n in range(4)]
                assert 100 not in answers  # the held write is still running
                # the writes past the queue's room come back at once, the writer held
                refused = WRITES - MAX_WAITING_WRITES
                with anyio.fail_after(NEVER_ANSWERED):
                    while len(answers) < refused:
                        await anyio.sleep(0.05)
                assert 100 not in answers
                for answer in answers.values():
                    assert answer.is_error and "writes wait already" in answer.content[0].text
                release(gate)
            assert not answers[100].is_error, answers[100].content[0].text
            accepted = [n for n, answer in answers.items() if not answer.is_error]
            assert len(accepted) == MAX_WAITING_WRITES + 1
            found = await session.call_tool(
                "search", {"query": "refund", "k": 100, "where": {"lang": "queued"}}
            )
            ids = sorted(hit["id"] for hit in found.structured_content["results"])
            assert ids == sorted(f"faq-{n}" for n in accepted)

    with http_server(index, "--writable", said=said) as url:
        try:
            anyio.run(session_test, url)
        finally:
            release(gate)
