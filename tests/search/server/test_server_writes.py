"""Writes over HTTP: `serve --writable` upserts and deletes records; off by default,
token-guarded, never from a browser. Real `ctxsearch serve` processes on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner

from indexer import Indexer
from search.cli import cli
from search.server.write_queue import MAX_WAITING_WRITES
from tests.support.serving import RunningServer, running_server

TOKEN = "s3cret-writes"
# A write loads the model the first time: more than httpx's 5 s on a busy CI machine.
WRITE_TIMEOUT = 120


def records(first: int, last: int, lang: str) -> list[dict]:
    return [
        {
            "id": f"faq-{n}",
            "text": f"Question {n}: how long does a refund take? Refunds take {n} days.",
            "metadata": {"lang": lang, "n": n},
        }
        for n in range(first, last)
    ]


@pytest.fixture(scope="module")
def record_index(tmp_path_factory, tiny_model_dir):
    directory = tmp_path_factory.mktemp("records") / "index"
    Indexer(directory, model=str(tiny_model_dir)).upsert_records(records(0, 4, "en"))
    return directory


@pytest.fixture(scope="module")
def writable(record_index, tmp_path_factory):
    log = tmp_path_factory.mktemp("writable") / "server.log"
    with running_server(record_index, log, "--writable") as server:
        yield server


def ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return sorted(hit["id"] for hit in response.json()["results"])


def test_writes_are_off_unless_the_server_is_writable(record_index, tmp_path):
    with running_server(record_index, tmp_path / "server.log") as server:
        assert httpx.get(f"{server.url}/health").json()["writable"] is False
        for response in (
            httpx.post(f"{server.url}/records", json=records(9, 10, "en"), timeout=WRITE_TIMEOUT),
            httpx.delete(f"{server.url}/records/faq-1"),
            httpx.request("DELETE", f"{server.url}/records", json=["faq-1"]),
        ):
            assert response.status_code == 403
            assert (
                "read-only: start it with `ctxsearch serve --writable`" in response.json()["detail"]
            )
        found = httpx.get(f"{server.url}/search", params={"q": "refund", "mode": "lexical"})
        assert ids(found) == ["faq-0", "faq-1", "faq-2", "faq-3"]


def test_a_writable_server_upserts_deletes_and_searches_its_own_writes(writable):
    url = writable.url
    assert httpx.get(f"{url}/health").json()["writable"] is True
    added = httpx.post(
        f"{url}/records", json={"records": records(10, 16, "fr")}, timeout=WRITE_TIMEOUT
    ).json()
    assert (added["added"], added["chunks"], added["total_documents"]) == (6, 6, 10)
    assert added["encoded"] == 6  # the passages run through the model
    same_text = [{**record, "id": f"copy-{record['id']}"} for record in records(10, 12, "fr")]
    copied = httpx.post(f"{url}/records", json=same_text, timeout=WRITE_TIMEOUT).json()
    assert (copied["added"], copied["chunks"], copied["encoded"]) == (2, 2, 0)
    httpx.request("DELETE", f"{url}/records", json=[record["id"] for record in same_text])
    search = {"q": "refund days", "k": 10, "mode": "lexical", "where": "lang=fr"}
    assert ids(httpx.get(f"{url}/search", params=search)) == [f"faq-{n}" for n in range(10, 16)]
    posted = httpx.post(
        f"{url}/search", json={"q": "refund", "k": 3, "where": {"lang": "fr", "n": 12}}
    )
    assert ids(posted) == ["faq-12"] and posted.json()["results"][0]["metadata"]["n"] == 12
    again = httpx.post(f"{url}/records", json=records(10, 12, "fr"), timeout=WRITE_TIMEOUT).json()
    assert (again["unchanged"], again["chunks"], again["encoded"]) == (2, 0, 0)
    assert httpx.delete(f"{url}/records/faq-10").json()["deleted"] == 1
    gone = httpx.delete(f"{url}/records/faq-10")
    assert gone.status_code == 404
    assert gone.json() == {"detail": "no record with id 'faq-10' in the index"}
    many = httpx.request("DELETE", f"{url}/records", json={"ids": ["faq-11", "nobody"]}).json()
    assert (many["deleted"], many["not_found"]) == (1, ["nobody"])
    assert ids(httpx.get(f"{url}/search", params=search)) == [f"faq-{n}" for n in range(12, 16)]
    bad = httpx.post(
        f"{url}/records",
        json=[{"id": "x", "text": "t", "metadata": {"a": [1]}}],
        timeout=WRITE_TIMEOUT,
    )
    assert bad.status_code == 422
    assert bad.json()["detail"] == (
        "record 1: metadata 'a' must be a string, number or boolean, not list (metadata is flat)"
    )
    assert httpx.post(f"{url}/records", json={"rows": []}, timeout=WRITE_TIMEOUT).status_code == 422
    large = [{"id": "long", "text": "refund " * 20_000}]  # 140 KB: over the 64 KB of a search
    assert httpx.post(f"{url}/records", json=large, timeout=WRITE_TIMEOUT).json()["added"] == 1


def test_get_and_post_where_compare_numbers_alike(writable):
    url = writable.url
    for value in ("2", "2.0", "2e0"):
        found = httpx.get(f"{url}/search", params={"q": "refund", "where": f"n={value}"})
        assert ids(found) == ["faq-2"], value
        posted = httpx.post(f"{url}/search", json={"q": "refund", "where": [f"n={value}"]})
        assert ids(posted) == ["faq-2"], value
    for value in (2, 2.0):
        posted = httpx.post(f"{url}/search", json={"q": "refund", "where": {"n": value}})
        assert ids(posted) == ["faq-2"], value
    as_text = httpx.post(f"{url}/search", json={"q": "refund", "where": {"n": "2.0"}})
    assert ids(as_text) == []  # a JSON string is a string: no record holds the text "2.0"


@pytest.mark.parametrize(
    ("method", "body", "message"),
    [
        ("POST", b'[{"id": "x", "text": ', "the body is not JSON (Expecting value)"),
        ("POST", b"\xff\xfe[]", "the body is not JSON"),
        ("POST", b"", "the body is empty: a write's body is JSON"),
        ("POST", b"[]", "no records to upsert"),
        ("DELETE", b"", "the body is empty: a write's body is JSON"),
        ("DELETE", b'{"ids": []}', "no record ids to delete"),
        ("DELETE", b'{"ids": [7]}', "id 1: the id must be a non-empty string, not 7"),
    ],
)
def test_a_bad_write_body_is_a_one_line_422(writable, method, body, message):
    response = httpx.request(
        method,
        f"{writable.url}/records",
        content=body,
        headers={"content-type": "application/json"},
        timeout=WRITE_TIMEOUT,
    )
    assert response.status_code == 422, response.text
    assert response.json()["detail"].startswith(message)


def test_the_write_endpoints_document_their_json_bodies(writable):
    paths = httpx.get(f"{writable.url}/openapi.json").json()["paths"]
    assert (
        set(paths["/records"]) == {"post", "delete"} and "delete" in paths["/records/{record_id}"]
    )
    body = paths["/records"]["post"]["requestBody"]
    assert body["required"] and "One atomic change" in body["description"]
    assert body["content"]["application/json"]["example"][0]["id"] == "faq-12"


AWKWARD_IDS = [
    "line\nbreak",
    "ends\n",  # beside "ends": a path that ends in %0A is not the id without it
    "ends",
    "tab\there",
    "cr\rlf\r\n",
    "a/b",
    "a/../b",
    "..",
    " spaced ",
    "q?#&=%41",
    "\ufffd",
    "ünï 猫",
]


def test_every_id_a_post_accepts_a_delete_by_path_finds(writable):
    url = writable.url
    body = [{"id": record_id, "text": "awkward refund ids"} for record_id in AWKWARD_IDS]
    assert httpx.post(f"{url}/records", json=body, timeout=WRITE_TIMEOUT).json()["added"] == 12
    bad_escape = httpx.delete(f"{url}/records/%FF")  # not UTF-8: names no id, not "\ufffd"
    assert bad_escape.status_code == 400, bad_escape.text
    assert "not UTF-8" in bad_escape.json()["detail"]
    for record_id in AWKWARD_IDS:
        # a dot segment is dropped by clients unless its dots are escaped too
        path = quote(record_id, safe="").replace(".", "%2E")
        deleted = httpx.delete(f"{url}/records/{path}")
        assert deleted.status_code == 200, (record_id, deleted.text)
        assert deleted.json()["deleted"] == 1, record_id
        again = httpx.delete(f"{url}/records/{path}")
        assert again.status_code == 404, (record_id, again.text)
        assert again.json() == {"detail": f"no record with id {record_id!r} in the index"}


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://attacker.example"},
        {"Origin": "http://127.0.0.1:{port}"},  # even the server's own page may not write
        {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"},
        {"Content-Type": "text/plain"},  # what an HTML form can send
    ],
)
def test_a_browser_cannot_write(writable, headers):
    port = writable.url.rsplit(":", 1)[1]
    headers = {name: value.format(port=port) for name, value in headers.items()}
    body = '[{"id": "evil", "text": "planted by a web page"}]'
    response = httpx.post(
        f"{writable.url}/records", content=body, headers=headers, timeout=WRITE_TIMEOUT
    )
    assert response.status_code == 403, response.text
    if "Content-Type" not in headers:  # a DELETE has no body, so no type to check
        deleted = httpx.delete(f"{writable.url}/records/faq-0", headers=headers)
        assert deleted.status_code == 403
    found = httpx.get(f"{writable.url}/search", params={"q": "planted web page", "k": 50})
    assert "evil" not in ids(found) and "faq-0" in ids(found)


def test_writes_need_the_token_and_a_token_off_loopback(record_index, tmp_path):
    refused = CliRunner().invoke(
        cli, ["serve", "--index", str(record_index), "--host", "0.0.0.0", "--writable"]
    )
    assert refused.exit_code == 2
    assert "--writable on --host 0.0.0.0 lets other machines change the index: give --token" in (
        refused.stderr
    )
    log = tmp_path / "server.log"
    with running_server(record_index, log, "--writable", "--token", TOKEN) as server:
        write = records(20, 21, "de")
        missing = httpx.post(f"{server.url}/records", json=write, timeout=WRITE_TIMEOUT)
        assert missing.status_code == 401
        wrong = {"Authorization": "Bearer not-it"}
        assert (
            httpx.post(
                f"{server.url}/records", json=write, headers=wrong, timeout=WRITE_TIMEOUT
            ).status_code
            == 401
        )
        right = {"Authorization": f"Bearer {TOKEN}"}
        done = httpx.post(f"{server.url}/records", json=write, headers=right, timeout=WRITE_TIMEOUT)
        assert done.status_code == 200 and done.json()["added"] == 1
        assert httpx.delete(f"{server.url}/records/faq-20", headers=right).status_code == 200


def test_a_write_while_another_process_writes_answers_503_and_changes_nothing(
    writable, record_index
):
    from indexer.store.backends import open_store

    store = open_store(record_index)
    try:
        with store.writer():
            busy = httpx.post(
                f"{writable.url}/records", json=records(30, 31, "en"), timeout=WRITE_TIMEOUT
            )
    finally:
        store.close()
    assert busy.status_code == 503
    detail = busy.json()["detail"]
    assert "is writing this index" in detail and "send the write again" in detail
    assert "--wait" not in detail  # the command line's advice means nothing to a client
    found = httpx.get(f"{writable.url}/search", params={"q": "refund", "k": 50})
    assert "faq-30" not in ids(found)


def wait_until_held(server: RunningServer, point: str, write: Future) -> None:
    """Wait until the server's writer says it is held at `point` (CTXSEARCH_HOLD_AT)."""
    while f"held at {point}" not in server.log.read_text():
        assert server.process.poll() is None, server.log.read_text()
        assert not write.done(), write.result().text  # it ended without being held
        threading.Event().wait(0.05)


def release(gate: Path) -> None:
    """Let a writer held at `gate` go on (nothing happens if none waits there)."""
    with contextlib.suppress(OSError):  # ENXIO: nobody has the gate open
        os.close(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))


def test_reads_answer_while_writes_queue_and_a_full_queue_is_a_503(
    tmp_path, tiny_model_dir, monkeypatch
):
    index = tmp_path / "index"
    Indexer(index, model=str(tiny_model_dir)).upsert_records(records(0, 4, "en"))
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    monkeypatch.setenv("CTXSEARCH_HOLD_AT", f"after-batch:{gate}")
    queued = 40
    limits = httpx.Limits(max_connections=queued + 8)
    with (
        running_server(index, tmp_path / "server.log", "--writable") as server,
        httpx.Client(base_url=server.url, timeout=WRITE_TIMEOUT, limits=limits) as client,
        ThreadPoolExecutor(queued + 1) as pool,
    ):
        try:
            large = pool.submit(client.post, "/records", json=records(1000, 1200, "large"))
            wait_until_held(server, "after-batch", large)
            writes = {
                f"faq-{n}": pool.submit(client.post, "/records", json=records(n, n + 1, "queued"))
                for n in range(100, 100 + queued)
            }
            search = {"q": "refund", "mode": "hybrid"}
            assert client.get("/health").status_code == 200
            assert ids(client.get("/search", params=search)) == [f"faq-{n}" for n in range(4)]
            # all the writes over the queue's room are refused at once, the writer held
            answers = as_completed(writes.values())
            refused = [next(answers).result() for _ in range(queued - MAX_WAITING_WRITES)]
            for response in refused:
                assert response.status_code == 503, response.text
                assert "writes wait already" in response.json()["detail"]
                assert int(response.headers["retry-after"]) >= 1
            assert client.get("/health").status_code == 200  # reads answer, the queue full
            assert ids(client.get("/search", params=search)) == [f"faq-{n}" for n in range(4)]
            assert not large.done()
            assert sum(write.done() for write in writes.values()) == len(refused)
        finally:
            release(gate)
        assert large.result().json()["added"] == 200
        accepted = [name for name, write in writes.items() if write.result().status_code != 503]
        assert len(accepted) == MAX_WAITING_WRITES
        assert all(writes[name].result().json()["added"] == 1 for name in accepted)
        found = client.get("/search", params={**search, "k": 50, "where": "lang=queued"})
        assert ids(found) == sorted(accepted)


def test_a_write_after_the_index_was_rebuilt_uses_the_new_index_settings(tmp_path, tiny_model_dir):
    """`rm -rf` the index under a writable server and build it again with cls pooling: the
    server's next write is encoded with cls pooling, so a record's own text finds it."""
    import shutil

    from search import Searcher

    index = tmp_path / "ix"
    Indexer(index, model=str(tiny_model_dir)).upsert_records(records(0, 2, "en"))
    with running_server(index, tmp_path / "server.log", "--writable") as server:
        first = httpx.post(f"{server.url}/records", json=records(2, 3, "en"), timeout=WRITE_TIMEOUT)
        assert first.status_code == 200  # the server's writer holds mean-pooling encoders
        shutil.rmtree(index)
        command = ["index", "--jsonl", "-", "--index", str(index), "--quiet"]
        rebuilt = CliRunner().invoke(
            cli,
            [*command, "--model", str(tiny_model_dir), "--pooling", "cls"],
            input='{"id": "seed", "text": "Owls hunt at night."}\n',
        )
        assert rebuilt.exit_code == 0, rebuilt.output
        heron = "Herons stand still in the shallows and spear fish."
        write = [{"id": "heron", "text": heron}]
        assert (
            httpx.post(f"{server.url}/records", json=write, timeout=WRITE_TIMEOUT).json()["added"]
            == 1
        )
    with Searcher(index) as searcher:
        hits = searcher.search(heron, k=10, mode="contextual").results
        assert searcher.manifest.pooling == "cls"
    assert next(hit.score for hit in hits if hit.id == "heron") == pytest.approx(1.0, abs=0.01)


def test_a_writable_server_loads_one_model_and_is_ready_for_writes_when_it_says(
    tmp_path, tiny_model_dir
):
    """`serve --writable` loads the model once, for searching and writing, before it says
    it is ready: the first write loads nothing. A write into an index rebuilt with
    another model loads that one, and the log says so."""
    import shutil

    index = tmp_path / "ix"
    Indexer(index, model=str(tiny_model_dir)).upsert_records(records(0, 2, "en"))
    log = tmp_path / "server.log"
    with running_server(index, log, "--writable") as server:
        assert "loaded for searching and writing in" in log.read_text()
        first = httpx.post(f"{server.url}/records", json=records(2, 3, "en"), timeout=WRITE_TIMEOUT)
        assert first.json()["added"] == 1
        found = httpx.get(f"{server.url}/search", params={"q": "refund", "mode": "contextual"})
        assert found.json()["query_encoder"] == {"contextual": "torch"}
        assert "a write is loading" not in log.read_text()
        other = tmp_path / "other-model"
        shutil.copytree(tiny_model_dir, other)
        shutil.rmtree(index)
        Indexer(index, model=str(other)).upsert_records(records(0, 1, "en"))
        again = httpx.post(f"{server.url}/records", json=records(3, 4, "en"), timeout=WRITE_TIMEOUT)
        assert again.json()["added"] == 1
    told = log.read_text()
    assert told.count("a write is loading the model the index needs now") == 1
    assert "the write's model loaded in" in told


def test_a_writable_servers_searches_and_writes_share_one_loaded_model(tmp_path, tiny_model_dir):
    from search import Searcher
    from search.server.record_writer import RecordWriter

    index = tmp_path / "ix"
    Indexer(index, model=str(tiny_model_dir)).upsert_records(records(0, 2, "en"))
    writer = RecordWriter(index)
    writer.load_encoders()
    with Searcher(index, query_encoder="torch") as searcher:
        assert searcher.encoders()["contextual"].loaded is writer.indexer.encoders.loaded
    events = []
    writer.indexer.upsert_records(records(2, 4, "en"), progress=events.append)
    assert events and not [event for event in events if event.stage == "load-model"]
