"""Nothing is read before the caller is known: a request without the token, or a write
that the full queue cannot take, is answered before its body is read. Real
`ctxsearch serve` and `ctxsearch mcp --http` processes on 127.0.0.1, and a raw socket
client that declares a large body and sends only its first bytes."""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

from indexer import Indexer
from search.server.guard import MAX_WRITE_BODY_BYTES
from search.server.write_queue import MAX_WAITING_WRITES
from tests.search.server.test_server_writes import (
    WRITE_TIMEOUT,
    records,
    release,
    wait_until_held,
)
from tests.support.mcp_client import http_server, http_session
from tests.support.serving import running_server

TOKEN = "s3cret-bodies"
# How long a client waits for an answer that a server owes it at once. A server that
# waits for the body instead never answers: the wait ends the test, it measures nothing.
NEVER_ANSWERED = 60
DECLARED = MAX_WRITE_BODY_BYTES  # the largest body a write may carry
FIRST_BYTES = b'[{"id": "x", '


@pytest.fixture(scope="module")
def record_index(tmp_path_factory, tiny_model_dir) -> Path:
    directory = tmp_path_factory.mktemp("bodies") / "index"
    Indexer(directory, model=str(tiny_model_dir)).upsert_records(records(0, 2, "en"))
    return directory


def answer_to_a_head(
    url: str, headers: dict[str, str], declared: int = DECLARED
) -> tuple[http.client.HTTPResponse, str]:
    """POST to `url` a head declaring `declared` body bytes, then only `FIRST_BYTES` of
    the body; the server's answer and its text, which must come while the rest of the
    body is still unsent."""
    parts = urlsplit(url)
    head = [f"POST {parts.path} HTTP/1.1", f"Host: {parts.netloc}"]
    head += ["Content-Type: application/json", "Accept: application/json, text/event-stream"]
    head += [f"{name}: {value}" for name, value in headers.items()]
    head.append(f"Content-Length: {declared}")
    connection = socket.create_connection((parts.hostname, parts.port), timeout=NEVER_ANSWERED)
    with connection:
        connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + FIRST_BYTES)
        response = http.client.HTTPResponse(connection)
        response.begin()
        return response, response.read().decode()


@pytest.mark.parametrize("server", ["serve", "mcp"])
@pytest.mark.parametrize("authorization", [None, "Bearer not-it"])
def test_a_request_without_the_token_is_refused_before_its_body(
    record_index, tmp_path, server, authorization
):
    headers = {"Authorization": authorization} if authorization else {}
    with contextlib.ExitStack() as stack:
        if server == "serve":
            running = stack.enter_context(
                running_server(record_index, tmp_path / "log", "--writable", "--token", TOKEN)
            )
            url = f"{running.url}/records"
        else:
            url = stack.enter_context(http_server(record_index, "--writable", "--token", TOKEN))
        for declared in (DECLARED, 1000):  # a write's cap, and a small body too
            response, text = answer_to_a_head(url, headers, declared)
            assert response.status == 401, (declared, response.status, text)
            assert "bearer token" in text
            assert response.getheader("www-authenticate") == "Bearer"
        # the token still lets a whole write in
        if server == "serve":
            given = {"Authorization": f"Bearer {TOKEN}"}
            written = httpx.post(
                url, json=records(5, 6, "en"), headers=given, timeout=WRITE_TIMEOUT
            )
            assert written.status_code == 200, written.text
        else:
            anyio.run(_upsert_over_mcp, url)


async def _upsert_over_mcp(url: str) -> None:
    async with http_session(url, token=TOKEN) as session:
        written = await session.call_tool("upsert_records", {"records": records(5, 6, "en")})
        assert not written.is_error, written.content[0].text


def _peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc status")


def _send_whole_body(url: str, body: bytes) -> None:
    """POST `body` without the token, as a client that does not wait to be refused."""
    parts = urlsplit(url)
    head = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    with (
        contextlib.suppress(OSError),  # the server may close the connection mid-body
        socket.create_connection((parts.hostname, parts.port), timeout=NEVER_ANSWERED) as sock,
    ):
        sock.sendall(head.encode() + body)
        sock.recv(1024)


def test_twenty_unauthorized_bodies_do_not_grow_the_server(record_index, tmp_path):
    body = b"[" + b" " * (DECLARED - 2) + b"]"
    with running_server(record_index, tmp_path / "log", "--writable", "--token", TOKEN) as server:
        pid = server.process.pid
        assert httpx.get(f"{server.url}/health").status_code == 200
        before = _peak_rss_mb(pid)
        with ThreadPoolExecutor(20) as pool:
            list(pool.map(lambda _: _send_whole_body(f"{server.url}/records", body), range(20)))
        assert httpx.get(f"{server.url}/health").status_code == 200
        after = _peak_rss_mb(pid)
    print(f"peak RSS of the server: {before:.0f} MB before, {after:.0f} MB after")
    assert after - before < 64, (before, after)


def test_a_write_the_full_queue_cannot_take_is_refused_before_its_body(
    tmp_path, tiny_model_dir, monkeypatch
):
    index = tmp_path / "index"
    Indexer(index, model=str(tiny_model_dir)).upsert_records(records(0, 2, "en"))
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    monkeypatch.setenv("CTXSEARCH_HOLD_AT", f"after-batch:{gate}")
    queued = MAX_WAITING_WRITES + 4
    limits = httpx.Limits(max_connections=queued + 8)
    with (
        running_server(index, tmp_path / "server.log", "--writable") as server,
        httpx.Client(base_url=server.url, timeout=WRITE_TIMEOUT, limits=limits) as client,
        ThreadPoolExecutor(queued + 1) as pool,
    ):
        try:
            held = pool.submit(client.post, "/records", json=records(100, 101, "held"))
            wait_until_held(server, "after-batch", held)
            writes = [
                pool.submit(client.post, "/records", json=records(n, n + 1, "queued"))
                for n in range(200, 200 + queued)
            ]
            refused = next(as_completed(writes)).result()  # the writer is held: the queue is full
            assert refused.status_code == 503, refused.text
            response, text = answer_to_a_head(f"{server.url}/records", {})
            assert response.status == 503, text
            assert "writes wait already" in text
            assert int(response.getheader("retry-after")) >= 1
            assert not held.done()
        finally:
            release(gate)
        assert held.result().json()["added"] == 1
        answered = [write.result().status_code for write in writes]
        assert answered.count(200) == MAX_WAITING_WRITES and answered.count(503) == 4
