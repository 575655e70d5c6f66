"""One search request (`search.request`): Python, the command line and both forms of
`/search` take the same parameters, build the same checked `SearchRequest`, and answer
the same JSON."""

import dataclasses
import inspect
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from indexer import InvalidQuery
from search import Searcher
from search.cli import cli
from search.modes import Mode
from search.request import Kind, SearchRequest, parameters
from tests.conftest import ROOT, SAMPLE_CORPUS

# The options of `query` that are not about what to search but how and where to answer.
NOT_THE_REQUEST = {
    "target",
    "query_encoder",
    "verbose",
    "output_format",
    "link_template",
    "as_json",
}


def without_timings(payload: dict) -> dict:
    return {**payload, "timings": sorted(payload["timings"])}


def cli_json(*args) -> dict:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_every_parameter_is_an_option_of_query_and_a_field_of_get_and_post_search(sample_index):
    from search.server.app import create_app

    described = list(parameters())
    options = {param.name: param for param in cli.commands["query"].params}
    old_names = {about.old_name for _, _, about in described if about.old_name}
    assert set(options) - NOT_THE_REQUEST == {name for name, _, _ in described} | old_names
    for name, _default, about in described:
        assert options[name].opts == ([about.flag] if about.flag else [name])
        assert options[name].multiple is (about.kind in (Kind.TEXTS, Kind.PLACES, Kind.PAIRS))
    # the command takes one request, not an argument per option
    taken = inspect.signature(inspect.unwrap(cli.commands["query"].callback)).parameters
    assert set(taken) == {"request"} | NOT_THE_REQUEST

    with Searcher(sample_index) as searcher:
        schema = create_app(searcher).openapi()
    http_names = [about.http for _, _, about in described]
    search = schema["paths"]["/search"]
    assert [param["name"] for param in search["get"]["parameters"]] == http_names
    body = search["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body_schema = schema["components"]["schemas"][body.rsplit("/", 1)[1]]
    assert list(body_schema["properties"]) == http_names
    assert body_schema["required"] == ["q"] and body_schema["additionalProperties"] is False


def test_the_command_line_get_and_post_answer_the_same_json(sample_server, sample_index):
    finance = str(SAMPLE_CORPUS / "finance")
    expected = cli_json(
        *("query", "bank", "--index", sample_index, "-k", 3, "--dense-weight", 0.7),
        *("--all-chunks", "--under", finance, "--path", "*.md", "--path", "*.txt"),
        *("--type", "md", "--type", "txt", "--min-similarity", 0.05, "--json"),
    )
    assert expected["results"] and expected["filters"]["path"] == ["*.md", "*.txt"]
    query = [("q", "bank"), ("k", "3"), ("dense_weight", "0.7"), ("all_chunks", "true")]
    query += [("under", finance), ("path", "*.md"), ("path", "*.txt"), ("type", "md")]
    query += [("type", "txt"), ("min_similarity", "0.05")]
    got = httpx.get(f"{sample_server.url}/search", params=query)
    body = {"q": "bank", "k": 3, "dense_weight": 0.7, "all_chunks": True, "under": finance}
    body |= {"path": ["*.md", "*.txt"], "type": ["md", "txt"], "min_similarity": 0.05}
    posted = httpx.post(f"{sample_server.url}/search", json=body)
    assert without_timings(got.json()) == without_timings(expected)
    assert without_timings(posted.json()) == without_timings(expected)

    records = cli_json("query", "bank", "--index", sample_index, "--where", "lang=en", "--json")
    got = httpx.get(f"{sample_server.url}/search", params={"q": "bank", "where": "lang=en"})
    posted = httpx.post(f"{sample_server.url}/search", json={"q": "bank", "where": {"lang": "en"}})
    assert records["filters"]["where"] == {"lang": "en"} and records["results"] == []
    assert without_timings(got.json()) == without_timings(posted.json()) == without_timings(records)


def test_keywords_and_a_request_search_alike(sample_index):
    finance = SAMPLE_CORPUS / "finance"
    asked = {"k": 3, "under": finance, "path": ["*.md", "*.txt"], "file_type": "md"}
    request = SearchRequest("savings account", mode=Mode.LEXICAL, **asked)
    with Searcher(sample_index) as searcher:
        by_keywords = searcher.search("savings account", mode="lexical", **asked).to_dict()
        by_request = searcher.search(request).to_dict()
        by_old_name = searcher.search("savings account", space="lexical", **asked).to_dict()
        changed = searcher.search(request, k=1, mode="lexical")
    assert by_keywords["results"] and by_keywords["mode"] == "lexical"
    assert without_timings(by_request) == without_timings(by_keywords)
    assert without_timings(by_old_name) == without_timings(by_keywords)
    assert [hit.to_dict() for hit in changed.results] == by_keywords["results"][:1]


def test_a_request_is_checked_when_made_and_cannot_change():
    request = SearchRequest("bank", under=Path("/srv/docs"), file_type="md", where={"lang": "en"})
    assert request.under == ("/srv/docs",) and request.file_type == ("md",)
    assert request.mode is Mode.HYBRID and request.k == 10 and request.path == ()
    assert dict(request.where) == {"lang": "en"} and request.filter.types == ("md",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.k = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        request.where["lang"] = "fr"  # type: ignore[index]
    with pytest.raises(InvalidQuery, match="k must be a positive number of results, not 0"):
        dataclasses.replace(request, k=0)
    with pytest.raises(InvalidQuery, match="a dense weight only applies to hybrid mode"):
        SearchRequest("bank", mode="static", dense_weight=0.5)
    with pytest.raises(InvalidQuery, match="--under needs an absolute path"):
        SearchRequest("bank", under="docs")
    with pytest.raises(InvalidQuery, match="unknown file type 'nope!'"):
        SearchRequest("bank", file_type=["md", "nope!"])
    with pytest.raises(InvalidQuery, match="the minimum similarity must be between -1 and 1"):
        SearchRequest("bank", min_similarity=1.5)


def test_the_command_line_does_not_import_the_http_model():
    """`ctxsearch query` builds its request without pydantic or FastAPI (a query
    process is a fraction of a second; they would add to every one)."""
    program = "import json, sys, search.cli.main; print(json.dumps(list(sys.modules)))"
    completed = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, check=True
    )
    loaded = set(json.loads(completed.stdout))
    assert {"search.request", "search.cli.request_options"} <= loaded
    assert not {"pydantic", "fastapi", "starlette"} & loaded
