"""The HTTP API, against a real `ctxsearch serve` process over the sample index."""

import json
import socket
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from search.cli import cli
from tests.conftest import SAMPLE_CORPUS
from tests.serving import running_server


def cli_json(*args) -> dict:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def without_timings(payload: dict) -> dict:
    """A search response with its timings' values left out (they differ on every call)."""
    return {**payload, "timings": sorted(payload["timings"])}


@pytest.mark.parametrize(
    ("query", "k", "mode"),
    [
        ("the python swallowed its prey", 3, "hybrid"),
        ("erosion along the bank after the flood", 5, "contextual"),
        ("erosion along the bank after the flood", 5, "static"),
        ("tower crane safety", 4, "lexical"),
    ],
)
def test_search_answers_the_json_of_query_json(sample_server, sample_index, query, k, mode):
    expected = cli_json("query", query, "--index", sample_index, "-k", k, "--mode", mode, "--json")
    got = httpx.get(f"{sample_server.url}/search", params={"q": query, "k": k, "mode": mode})
    assert got.status_code == 200
    assert got.headers["content-type"] == "application/json"
    assert without_timings(got.json()) == without_timings(expected)
    posted = httpx.post(f"{sample_server.url}/search", json={"q": query, "k": k, "mode": mode})
    assert without_timings(posted.json()) == without_timings(expected)


def test_search_defaults_and_all_chunks(sample_server, sample_index):
    expected = cli_json("query", "how airplanes bank", "--index", sample_index, "--json")
    got = httpx.get(f"{sample_server.url}/search", params={"q": "how airplanes bank"}).json()
    assert got["mode"] == "hybrid" and len(got["results"]) == 10
    assert without_timings(got) == without_timings(expected)
    every = httpx.get(
        f"{sample_server.url}/search",
        params={"q": "how airplanes bank", "k": 20, "all_chunks": "true"},
    ).json()
    paths = [hit["path"] for hit in every["results"]]
    assert len(paths) > len(set(paths))


def test_search_takes_a_dense_weight_like_query_does(sample_server, sample_index):
    query = "why does my coffee taste bitter"
    expected = cli_json(
        "query", query, "--index", sample_index, "-k", 4, "--dense-weight", 0.8, "--json"
    )
    params = {"q": query, "k": 4, "dense_weight": 0.8}
    got = httpx.get(f"{sample_server.url}/search", params=params).json()
    assert without_timings(got) == without_timings(expected)
    posted = httpx.post(f"{sample_server.url}/search", json=params).json()
    assert without_timings(posted) == without_timings(expected)
    default = httpx.get(f"{sample_server.url}/search", params={"q": query, "k": 4}).json()
    assert [hit["score"] for hit in default["results"]] != [hit["score"] for hit in got["results"]]


def test_compare_answers_the_json_of_compare_json(sample_server, sample_index):
    query = "the bank of the river eroded in the flood"
    expected = cli_json("compare", query, "--index", sample_index, "-k", 5, "--json")
    got = httpx.get(f"{sample_server.url}/compare", params={"q": query, "k": 5})
    assert got.status_code == 200 and got.json() == expected
    assert set(got.json()) == {"query", "k", "static", "contextual"}


def test_info_answers_the_json_of_info_json(sample_server, sample_index):
    expected = cli_json("info", "--index", sample_index, "--json")
    assert httpx.get(f"{sample_server.url}/info").json() == expected


def test_a_document_comes_back_whole_with_its_chunks(sample_server):
    hit = httpx.get(
        f"{sample_server.url}/search", params={"q": "pythons constrict their prey", "k": 1}
    ).json()["results"][0]
    got = httpx.get(f"{sample_server.url}/documents/{hit['document_id']}")
    assert got.status_code == 200
    document = got.json()
    assert document["id"] == hit["document_id"] and document["path"] == hit["path"]
    source = Path(hit["path"])
    assert source.parent.parent == SAMPLE_CORPUS and source.suffix == ".md"
    assert document["text"].strip() == source.read_text().strip()
    assert document["size"] == source.stat().st_size and len(document["sha256"]) == 64
    chunk = next(c for c in document["chunks"] if c["chunk_id"] == hit["chunk_id"])
    assert (chunk["start"], chunk["end"]) == (hit["start"], hit["end"])


def test_health_and_the_openapi_schema(sample_server):
    health = httpx.get(f"{sample_server.url}/health").json()
    assert health["status"] == "ok" and health["auth_required"] is False
    schema = httpx.get(f"{sample_server.url}/openapi.json").json()
    assert set(schema["paths"]["/search"]) == {"get", "post"}
    assert {"/compare", "/documents/{document_id}", "/health", "/info"} <= set(schema["paths"])
    modes = schema["paths"]["/search"]["get"]["parameters"][2]["schema"]["enum"]
    assert modes == ["hybrid", "contextual", "static", "lexical"]


@pytest.mark.parametrize(
    ("method", "path", "params", "status", "message"),
    [
        ("GET", "/search", {"q": ""}, 422, "query q: String should have at least 1 character"),
        ("GET", "/search", {}, 422, "query q: Field required"),
        ("GET", "/search", {"q": "   "}, 422, "the query is empty"),
        ("GET", "/search", {"q": "bank", "k": 0}, 422, "query k: Input should be greater than"),
        ("GET", "/search", {"q": "bank", "k": "many"}, 422, "query k: Input should be a valid"),
        ("GET", "/search", {"q": "bank", "mode": "sparse"}, 422, "query mode: Input should be"),
        ("POST", "/search", {"k": 3}, 422, "body q: Field required"),
        ("GET", "/search", {"q": "bank", "dense_weight": 2}, 422, "query dense_weight: Input"),
        ("POST", "/search", {"q": "bank", "dense_weight": -1}, 422, "body dense_weight: Input"),
        (
            "GET",
            "/search",
            {"q": "bank", "mode": "lexical", "dense_weight": 0.5},
            422,
            "only applies to hybrid",
        ),
        ("GET", "/compare", {"q": "bank", "mode": "static"}, 422, "mode and against must differ"),
        ("GET", "/documents/999999", {}, 404, "no document with id 999999"),
        ("GET", "/documents/first", {}, 422, "path document_id: Input should be a valid integer"),
        ("GET", "/nowhere", {}, 404, "Not Found"),
    ],
)
def test_bad_requests_get_json_errors_with_4xx(
    sample_server, method, path, params, status, message
):
    url = f"{sample_server.url}{path}"
    response = httpx.get(url, params=params) if method == "GET" else httpx.post(url, json=params)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert message in response.json()["detail"]


def test_a_body_that_is_not_json_is_a_422(sample_server):
    response = httpx.post(
        f"{sample_server.url}/search",
        content=b"q=bank",
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422 and "JSON" in response.json()["detail"]


def test_with_a_token_data_endpoints_need_it(sample_index, tmp_path):
    with running_server(sample_index, tmp_path / "log", "--token", "s3cret") as server:
        search = f"{server.url}/search"
        missing = httpx.get(search, params={"q": "bank"})
        assert missing.status_code == 401 and missing.json() == {"detail": "missing bearer token"}
        assert missing.headers["www-authenticate"] == "Bearer"
        wrong = httpx.get(search, params={"q": "bank"}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.json() == {"detail": "wrong bearer token"}
        right = {"Authorization": "Bearer s3cret"}
        assert httpx.get(search, params={"q": "bank"}, headers=right).status_code == 200
        for path in ("/info", "/documents/1", "/compare?q=bank"):
            assert httpx.get(server.url + path).status_code == 401, path
        assert httpx.post(search, json={"q": "bank"}).status_code == 401
        health = httpx.get(f"{server.url}/health").json()
        assert health["auth_required"] is True
        assert httpx.get(f"{server.url}/").status_code == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.org"])
def test_a_public_bind_without_a_token_is_a_usage_error(sample_index, host):
    result = CliRunner().invoke(cli, ["serve", "--index", str(sample_index), "--host", host])
    assert result.exit_code == 2
    assert f"--host {host} can be reached from other machines: give --token" in result.stderr
    assert "Traceback" not in result.output


def test_serve_refuses_a_folder_that_is_not_an_index(tmp_path):
    (tmp_path / "plain").mkdir()
    result = CliRunner().invoke(cli, ["serve", "--index", str(tmp_path / "plain")])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert errors == [f"Error: {tmp_path / 'plain'}: not a ctxsearch index"]
    assert "Traceback" not in result.output


def test_the_page_and_its_files_are_served(sample_server):
    page = httpx.get(f"{sample_server.url}/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<input id="query"' in page.text
    for name in ("app.js", "style.css"):
        assert httpx.get(f"{sample_server.url}/static/{name}").status_code == 200


def test_a_port_in_use_is_a_one_line_error_before_the_model_loads(sample_index):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            cli, ["serve", "--index", str(sample_index), "--port", str(port)]
        )
    assert result.exit_code == 1
    assert result.stderr == f"Error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
