"""A `where` is a scope at every edge (Python, `POST /search`, the MCP search tool): an
empty list of allowed values matches nothing, an operator without a value is refused,
and no `where` ever lets a file through."""

from __future__ import annotations

import anyio
import httpx
import pytest

from indexer.errors import InvalidQuery
from indexer.runs.indexer import Indexer
from search import Searcher
from tests.support.mcp_client import stdio_session
from tests.support.serving import running_server

RECORDS = [
    {
        "id": f"{tenant}-{n}",
        "text": f"invoice for bicycle repair {n}",
        "metadata": {"tenant": tenant},
    }
    for tenant in ("acme", "globex")
    for n in range(3)
]
EMPTY = [{"tenant": []}, {"tenant": {"=": []}}]
NO_VALUE = [{"tenant": {}}, {"tenant": {"!=": []}}, {"tenant": {">": []}}]


def build(target, folder, model: str) -> None:
    (folder / "bicycle.txt").write_text("A file about an invoice for bicycle repair.\n")
    indexer = Indexer(target, model=model)
    indexer.index_folder(folder)
    indexer.upsert_records(RECORDS)


@pytest.fixture(scope="module")
def scoped_index(tmp_path_factory):
    from indexer.encoders.hashed import HASHED_MODEL

    root = tmp_path_factory.mktemp("scopes")
    (root / "files").mkdir()
    build(root / "ix", root / "files", HASHED_MODEL)
    return root / "ix"


def test_python_finds_nothing_for_an_empty_scope_on_every_store(any_index, tmp_path, fast_model):
    (tmp_path / "files").mkdir()
    build(any_index, tmp_path / "files", fast_model)
    with Searcher(any_index) as searcher:
        assert len(searcher.search("bicycle invoice", k=20).results) == 7  # 6 records, 1 file
        allowed = searcher.search("bicycle invoice", k=20, where={"tenant": ["acme"]})
        assert sorted(hit.id for hit in allowed.results) == ["acme-0", "acme-1", "acme-2"]
        for where in EMPTY:
            response = searcher.search("bicycle invoice", k=20, where=where)
            assert response.results == [], where
            assert any("matches nothing" in hint for hint in response.hints), response.hints
            assert searcher.search("bicycle invoice", mode="lexical", where=where).results == []
        for where in NO_VALUE:
            with pytest.raises(InvalidQuery, match="tenant"):
                searcher.search("bicycle invoice", where=where)


def test_post_search_finds_nothing_for_an_empty_scope_and_refuses_no_value(scoped_index, tmp_path):
    with running_server(scoped_index, tmp_path / "serve.log") as server:
        search = f"{server.url}/search"
        for where in EMPTY:
            got = httpx.post(search, json={"q": "bicycle", "where": where}, timeout=60)
            assert got.status_code == 200 and got.json()["results"] == [], got.text
        for where in NO_VALUE:
            refused = httpx.post(search, json={"q": "bicycle", "where": where}, timeout=60)
            assert refused.status_code == 422 and "tenant" in refused.json()["detail"]


def test_the_mcp_search_tool_finds_nothing_for_an_empty_scope(scoped_index):
    async def session_test() -> None:
        async with stdio_session(scoped_index) as session:
            for where in EMPTY:
                found = await session.call_tool("search", {"query": "bicycle", "where": where})
                assert not found.is_error, found.content[0].text
                assert found.structured_content["results"] == []
            for where in NO_VALUE:
                refused = await session.call_tool("search", {"query": "bicycle", "where": where})
                assert refused.is_error and "tenant" in refused.content[0].text

    anyio.run(session_test)
