"""`ctxsearch mcp --http` (issue 27 item 1): the SDK's streamable HTTP client against a
real server process on 127.0.0.1, behind the guard and token rules of `serve`."""

from __future__ import annotations

import anyio
import httpx
import pytest
from click.testing import CliRunner

from search.cli import cli
from tests.support.mcp_client import http_server, http_session

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_the_tools_answer_over_http_and_a_foreign_host_or_origin_is_refused(sample_index):
    with http_server(sample_index) as url:

        async def session_test() -> None:
            async with http_session(url) as session:
                tools = {tool.name for tool in (await session.list_tools()).tools}
                assert tools == {"search", "read", "similar", "folders"}
                found = await session.call_tool(
                    "search", {"query": "the python swallowed its prey", "k": 2}
                )
                top = found.structured_content["results"][0]
                assert top["path"].endswith("pythons-constrictors.md") and top["similarity"] > 0.3
                read = await session.call_tool("read", {"chunk_id": top["chunk_id"]})
                assert read.structured_content["path"] == top["path"]
                near = await session.call_tool("similar", {"chunk_id": top["chunk_id"], "k": 2})
                assert len(near.structured_content["results"]) == 2
                folders = await session.call_tool("folders", {})
                assert folders.structured_content["documents"] > 0
                bad = await session.call_tool("similar", {"path": "/no/such.md"})
                assert bad.is_error and "no such document" in bad.content[0].text

        anyio.run(session_test)
        port = url.split(":")[2].split("/")[0]
        foreign = httpx.post(
            url, json=INITIALIZE, headers={**MCP_HEADERS, "Host": f"evil.example:{port}"}
        )
        assert foreign.status_code == 400
        assert "does not answer for host 'evil.example" in foreign.json()["detail"]
        crossing = httpx.post(
            url, json=INITIALIZE, headers={**MCP_HEADERS, "Origin": "http://evil.example"}
        )
        assert crossing.status_code == 403 and "cross-origin" in crossing.json()["detail"]
        answered = httpx.post(url, json=INITIALIZE, headers=MCP_HEADERS)
        assert answered.status_code == 200


def test_with_a_token_every_request_needs_it(sample_index):
    with http_server(sample_index, "--token", "s3cret") as url:
        missing = httpx.post(url, json=INITIALIZE, headers=MCP_HEADERS)
        assert missing.status_code == 401 and missing.json() == {"detail": "missing bearer token"}
        wrong = httpx.post(
            url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": "Bearer nope"}
        )
        assert wrong.status_code == 401 and wrong.json() == {"detail": "wrong bearer token"}

        async def session_test() -> None:
            async with http_session(url, token="s3cret") as session:
                found = await session.call_tool("search", {"query": "bank", "k": 1})
                assert not found.is_error

        anyio.run(session_test)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "9000"], "--port only go with --http"),
        (["--token", "x"], "--token only go with --http"),
        (["--http", "--host", "0.0.0.0"], "give --token"),
        (["--http", "--allowed-host", "a b"], "is not a host name"),
    ],
)
def test_bad_options_are_usage_errors(sample_index, args, message):
    result = CliRunner().invoke(cli, ["mcp", "--index", str(sample_index), *args])
    assert result.exit_code == 2 and message in result.stderr


def test_a_writable_server_takes_write_bodies_up_to_the_write_cap(tmp_path, tiny_model_dir):
    """A 5 MB `upsert_records` call reaches the tool (the SDK's own cap is 4 MB): its
    record, over the text limit, is a tool error, not an HTTP 413."""
    from indexer import Indexer

    index = tmp_path / "app.idx"
    Indexer(index, model=str(tiny_model_dir)).upsert_records([{"id": "a", "text": "Seed."}])
    with http_server(index, "--writable") as url:

        async def session_test() -> None:
            async with http_session(url) as session:
                huge = {"id": "huge", "text": "word " * 1_000_000}  # 5 MB of JSON
                answer = await session.call_tool("upsert_records", {"records": [huge]})
                assert answer.is_error and "1,000,000" in answer.content[0].text

        anyio.run(session_test)
