"""The MCP tools' search parameters are the request's (`search.request`): the same
bounds, defaults and help as the command line and HTTP, under the names MCP clients use
(`path_glob`, `type`), and calls with them search as the request does."""

from __future__ import annotations

import anyio
import pytest

from indexer.runs.indexer import Indexer
from search import Searcher
from search.mcp_server.tools import build_server
from search.request import parameters, similar_parameters
from search.server.app import create_app
from tests.conftest import ROOT

# The argument names clients have used since the tools were made: they never change.
CLIENT_NAMES = {
    "search": ["query", "mode", "k", "all_chunks", "under", "path_glob", "type", "where"],
    "similar": ["path", "line", "chunk_id", "mode", "k", "all_chunks", "under", "path_glob"],
}


@pytest.fixture
def searcher(tmp_path, notes, fast_model):
    Indexer(tmp_path / "ix", model=fast_model).index_folder(notes)
    with Searcher(tmp_path / "ix") as searcher:
        yield searcher


def tool_schemas(searcher: Searcher) -> dict[str, dict]:
    tools = anyio.run(build_server(searcher).list_tools)
    return {tool.name: tool.input_schema for tool in tools}


def test_the_search_tools_take_the_request_parameters_described_as_http_does(searcher):
    schemas = tool_schemas(searcher)
    openapi = create_app(searcher).openapi()
    http_help = {
        param["name"]: param["description"]
        for param in openapi["paths"]["/search"]["get"]["parameters"]
    }
    for tool, described in (("search", parameters()), ("similar", similar_parameters())):
        properties = schemas[tool]["properties"]
        assert set(CLIENT_NAMES[tool] + ["min_similarity", "where", "type"]) <= set(properties)
        for name, _default, about in described:
            argument = properties[about.mcp or name]
            assert argument["description"] == http_help[about.http], name
            if about.high is not None and about.low is not None and about.kind.value != "text":
                bounds = argument.get("anyOf", [argument])[0]
                assert (bounds["minimum"], bounds["maximum"]) == (about.low, about.high)
    assert schemas["search"]["required"] == ["query"]
    assert schemas["search"]["properties"]["query"]["maxLength"] > 0
    assert "dense_weight" in schemas["search"]["properties"]
    assert "dense_weight" not in schemas["similar"]["properties"]
    assert schemas["similar"]["properties"]["mode"]["default"] == "contextual"


def test_calls_with_the_mcp_names_filter_as_the_request_does(searcher):
    server = build_server(searcher)

    async def call(name: str, arguments: dict) -> dict:
        return (await server.call_tool(name, arguments)).structured_content

    async def calls() -> None:
        asked = {"query": "river", "k": 10, "type": ["txt"], "path_glob": ["r*"]}
        found = await call("search", asked)
        expected = searcher.search("river", k=10, file_type=["txt"], path=["r*"]).to_dict()
        assert [hit["path"] for hit in found["results"]] == [
            hit["path"] for hit in expected["results"]
        ]
        assert {hit["path"].rsplit("/", 1)[1] for hit in found["results"]} == {"river.txt"}
        weighed = await call(
            "search", {"query": "river bank", "dense_weight": 0.0, "detail": "full"}
        )
        lexical_only = searcher.search("river bank", dense_weight=0.0).results
        assert [(h["path"], h["score"]) for h in weighed["results"]] == [
            (hit.path, hit.score) for hit in lexical_only
        ]
        near = await call("similar", {"path": found["results"][0]["path"], "type": ["md"]})
        assert {hit["path"][-3:] for hit in near["results"]} == {".md"}

    anyio.run(calls)


def test_the_mcp_page_names_every_argument_of_search():
    page = (ROOT / "docs" / "mcp.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| `search` |"))
    arguments = row.split(" | ")[1]
    for name, _default, about in parameters():
        assert f"`{about.mcp or name}`" in arguments, name
