"""`where` comparisons and keys given twice at each edge (issue 27 item 7): the command
line on both stores, `GET`/`POST /search` on a real server, and the MCP search tool; a
malformed condition is a usage error everywhere, never a key named `year>`."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from click.testing import CliRunner

from indexer.runs.indexer import Indexer
from search.cli.main import cli
from tests.support.mcp_client import stdio_session
from tests.support.serving import running_server

RECORDS = [
    {"id": f"r{n}", "text": f"bicycle repair note {n}", "metadata": metadata}
    for n, metadata in enumerate(
        [
            {"year": 2019, "group": 0, "day": "2023-01-15"},
            {"year": 2020, "group": 1, "day": "2023-06-30"},
            {"year": 2022, "group": 2, "day": "2024-02-29"},
            {"year": 2024, "group": 2, "day": "2025-01-01"},
        ]
    )
]


def build(target, fast_model) -> None:
    Indexer(target, model=fast_model).upsert_records(RECORDS)


@pytest.fixture(scope="module")
def record_index(tmp_path_factory):
    from indexer.encoders.hashed import HASHED_MODEL

    target = tmp_path_factory.mktemp("where") / "ix"
    build(target, HASHED_MODEL)
    return target


def query_ids(target, *where: str) -> tuple[int, object]:
    arguments = ["query", "bicycle repair", "--index", str(target), "-k", "10", "--json"]
    for condition in where:
        arguments += ["--where", condition]
    result = CliRunner().invoke(cli, arguments)
    if result.exit_code:
        return result.exit_code, result.output
    return 0, sorted(hit["id"] for hit in json.loads(result.stdout)["results"])


def test_the_command_line_compares_and_ors_a_key_given_twice(any_index, fast_model):
    build(any_index, fast_model)
    assert query_ids(any_index, "group=0", "group=2") == (0, ["r0", "r2", "r3"])
    assert query_ids(any_index, "year>=2020", "year<2024") == (0, ["r1", "r2"])
    assert query_ids(any_index, "day>2023-06-30") == (0, ["r2", "r3"])
    assert query_ids(any_index, "year!=2020", "group=2") == (0, ["r2", "r3"])


@pytest.mark.parametrize("condition", ["year>>2", ">5", "year=", "year=>5"])
def test_a_malformed_condition_is_a_usage_error_on_the_command_line(record_index, condition):
    code, output = query_ids(record_index, condition)
    assert code == 2 and condition in output
    assert len(output.strip().splitlines()[-1]) and "Traceback" not in output


def test_a_comparison_on_a_key_no_record_has_gets_a_hint(record_index):
    result = CliRunner().invoke(
        cli, ["query", "bicycle", "--index", str(record_index), "--where", "price>5", "--json"]
    )
    assert result.exit_code == 0
    [hint] = json.loads(result.stdout)["hints"]
    assert hint.startswith("where price>5: no record has the metadata key price")
    none = CliRunner().invoke(
        cli, ["query", "bicycle", "--index", str(record_index), "--where", "year>3000"]
    )
    assert "where year>3000: no record's year is > 3000" in none.stderr


def test_http_get_and_post_take_comparisons(record_index, tmp_path):
    with running_server(record_index, tmp_path / "serve.log") as server:
        search = f"{server.url}/search"
        got = httpx.get(
            search,
            params=[("q", "bicycle"), ("where", "year>=2020"), ("where", "year<2024")],
            timeout=60,
        ).json()
        assert sorted(hit["id"] for hit in got["results"]) == ["r1", "r2"]
        assert got["filters"]["where_conditions"] == ["year<2024", "year>=2020"]
        posted = httpx.post(
            search,
            json={"q": "bicycle", "where": {"group": [0, 2], "year": {"<": 2024}}},
            timeout=60,
        ).json()
        assert sorted(hit["id"] for hit in posted["results"]) == ["r0", "r2"]
        listed = httpx.post(
            search, json={"q": "bicycle", "where": ["group=0", "group=2"]}, timeout=60
        ).json()
        assert sorted(hit["id"] for hit in listed["results"]) == ["r0", "r2", "r3"]
        for bad in (
            httpx.get(search, params={"q": "bicycle", "where": "year>>2"}, timeout=60),
            httpx.post(search, json={"q": "bicycle", "where": ["year="]}, timeout=60),
            httpx.post(search, json={"q": "bicycle", "where": {"year": {"~": 2}}}, timeout=60),
        ):
            assert bad.status_code == 422, bad.text
            assert "where" in bad.json()["detail"]


def test_the_mcp_search_tool_takes_comparisons(record_index):
    async def session_test() -> None:
        async with stdio_session(record_index) as session:
            found = await session.call_tool(
                "search", {"query": "bicycle", "where": {"year": {">": 2019, "<=": 2022}}}
            )
            assert not found.is_error, found.content[0].text
            ids = sorted(hit["id"] for hit in found.structured_content["results"])
            assert ids == ["r1", "r2"]
            either = await session.call_tool(
                "search", {"query": "bicycle", "where": ["group=1", "group=2", "day<2025-01-01"]}
            )
            assert sorted(h["id"] for h in either.structured_content["results"]) == ["r1", "r2"]
            bad = await session.call_tool("search", {"query": "bicycle", "where": ["year>>2"]})
            assert bad.is_error and "year>>2" in bad.content[0].text

    anyio.run(session_test)
