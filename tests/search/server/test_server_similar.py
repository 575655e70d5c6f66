"""`GET /similar` (issue 27 item 2): the JSON of `ctxsearch similar --json`, and bad
items as 404 or 422 with a JSON body."""

from __future__ import annotations

import json

import httpx
import pytest
from click.testing import CliRunner

from search.cli import cli
from tests.conftest import SAMPLE_CORPUS

SAVINGS = str(SAMPLE_CORPUS / "finance" / "savings-accounts.md")


def test_similar_answers_the_json_of_similar_json(sample_server, sample_index):
    answer = httpx.get(
        f"{sample_server.url}/similar", params={"item": SAVINGS, "k": 4, "type": "md"}
    )
    assert answer.status_code == 200, answer.text
    shown = CliRunner().invoke(
        cli, ["similar", SAVINGS, "--index", str(sample_index), "-k", "4", "--type", "md", "--json"]
    )
    expected = json.loads(shown.stdout)
    assert {**answer.json(), "timings": None} == {**expected, "timings": None}
    assert answer.json()["item"]["vector"] == "document mean"
    assert all(hit["path"].endswith(".md") for hit in answer.json()["results"])


def test_a_passage_by_line_or_chunk_id_and_static_mode(sample_server):
    by_line = httpx.get(
        f"{sample_server.url}/similar", params={"item": SAVINGS, "line": 1, "mode": "static"}
    ).json()
    passage = by_line["item"]["chunk_ids"][0]
    by_id = httpx.get(
        f"{sample_server.url}/similar", params={"chunk_id": passage, "mode": "static"}
    ).json()
    assert by_line["item"]["vector"] == by_id["item"]["vector"] == "passage"
    assert [h["chunk_id"] for h in by_line["results"]] == [h["chunk_id"] for h in by_id["results"]]
    assert by_id["mode"] == "static" and by_id["results"][0]["space"] == "static"


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({"item": "/no/such/file.md"}, 404, "no such document in the index"),
        ({"chunk_id": 10**12}, 404, "no passage with chunk_id"),
        ({"item": SAVINGS, "line": 9999}, 422, "line 9999 is past the end"),
        ({"item": SAVINGS, "mode": "hybrid"}, 422, "mode"),
        ({"item": SAVINGS, "line": 0}, 422, "line"),
        ({}, 422, "give the item"),
    ],
)
def test_bad_items_are_json_errors(sample_server, params, status, message):
    answer = httpx.get(f"{sample_server.url}/similar", params=params)
    assert answer.status_code == status
    assert message in answer.json()["detail"]
