"""Two `ctxsearch serve --writable` processes on one PostgreSQL index: what either writes,
the other's next query finds (replicas behind a load balancer). Real server processes
on 127.0.0.1, a real PostgreSQL."""

from __future__ import annotations

import httpx
import pytest

from indexer import Indexer
from tests.support.serving import running_server

pytestmark = pytest.mark.postgres

WRITE_TIMEOUT = 120


def record(name: str, text: str) -> dict:
    return {"id": name, "text": text, "metadata": {"team": "docs"}}


def found(server, query: str) -> list[str]:
    response = httpx.get(
        f"{server.url}/search", params={"q": query, "mode": "lexical", "k": 10}, timeout=30
    )
    assert response.status_code == 200, response.text
    return sorted(hit["id"] for hit in response.json()["results"])


def test_two_servers_on_one_postgres_index_see_each_others_writes(
    postgres_index, fast_model, tmp_path
):
    Indexer(postgres_index, model=fast_model).upsert_records(
        [record("seed", "The lighthouse keeper logs the weather every evening.")]
    )
    with (
        running_server(postgres_index, tmp_path / "a.log", "--writable") as first,
        running_server(postgres_index, tmp_path / "b.log", "--writable") as second,
    ):
        assert found(first, "lighthouse") == found(second, "lighthouse") == ["seed"]
        added = httpx.post(
            f"{first.url}/records",
            json=[record("gull", "A gull nests on the lighthouse gallery.")],
            timeout=WRITE_TIMEOUT,
        )
        assert added.status_code == 200, added.text
        assert found(second, "lighthouse gull") == ["gull", "seed"]
        added = httpx.post(
            f"{second.url}/records",
            json=[record("storm", "The storm broke a lighthouse window.")],
            timeout=WRITE_TIMEOUT,
        )
        assert added.status_code == 200, added.text
        assert found(first, "lighthouse") == ["gull", "seed", "storm"]
        assert httpx.delete(f"{first.url}/records/gull").json()["deleted"] == 1
        assert found(second, "lighthouse") == ["seed", "storm"]
        info = httpx.get(f"{second.url}/info", timeout=30).json()
        assert info["documents"] == 2
