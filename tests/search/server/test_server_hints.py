"""Filter hints over HTTP: GET and POST /search answer `hints` from a real server."""

from __future__ import annotations

import httpx
import pytest

from tests.support.hint_corpus import make_hint_index
from tests.support.serving import running_server


@pytest.fixture(scope="module")
def hint_server(tmp_path_factory, tiny_model_dir):
    """`ctxsearch serve` over notes (md, txt) and two records."""
    base = tmp_path_factory.mktemp("hint-server")
    index, folder = make_hint_index(base, tiny_model_dir)
    with running_server(index, base / "server.log") as server:
        yield server, folder


def test_get_and_post_search_carry_hints_for_filters_that_match_nothing(hint_server):
    server, folder = hint_server
    cases = [
        ({"under": "/nope"}, f"nothing indexed is under /nope; the indexed folders are {folder}"),
        ({"type": "bogus"}, "no indexed file is of type bogus; the types here are md, txt"),
        (
            {"where": "year=1"},
            "where year=1: no record has the metadata key year; the keys are lang, public",
        ),
        (
            {"where": "public=True"},
            "where public=True: no record has that value; records hold public=true",
        ),
        ({"where": "lang=EN"}, "where lang=EN: no record has that value; records hold lang=en"),
    ]
    for filters, hint in cases:
        query = {"q": "otters", "mode": "lexical", **filters}
        got = httpx.get(f"{server.url}/search", params=query, timeout=60)
        assert got.status_code == 200, got.text
        assert got.json()["results"] == [] and got.json()["hints"] == [hint]
        body = {**query, **{key: [value] for key, value in filters.items()}}
        posted = httpx.post(f"{server.url}/search", json=body, timeout=60)
        assert posted.status_code == 200, posted.text
        assert posted.json()["hints"] == [hint]
    found = httpx.get(f"{server.url}/search", params={"q": "otters", "mode": "lexical"})
    assert found.json()["results"] and found.json()["hints"] == []


def test_where_over_http_on_an_index_without_records(sample_server):
    got = httpx.get(
        f"{sample_server.url}/search", params={"q": "pythons", "where": "lang=en"}, timeout=60
    )
    assert got.status_code == 200
    assert got.json()["hints"] == [
        "where lang=en: this index holds no records (only records have metadata)"
    ]
