"""The HTTP API, against a real `ctxsearch serve` process over the sample index."""

import json
import socket
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from search.cli import cli
from tests.conftest import SAMPLE_CORPUS
from tests.support.serving import running_server


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
    for hit in got.json()["results"]:  # where the hit's best line is, and its copies
        assert hit["match_line"] >= hit["line"] and hit["duplicates"] == []
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


def test_search_explains_when_asked_and_only_then(sample_server):
    query = {"q": "savings account interest", "k": 2}
    plain = httpx.get(f"{sample_server.url}/search", params=query, timeout=120).json()
    assert all("explain" not in hit for hit in plain["results"])
    got = httpx.get(
        f"{sample_server.url}/search", params={**query, "explain": "true"}, timeout=120
    ).json()
    posted = httpx.post(
        f"{sample_server.url}/search", json={**query, "explain": True}, timeout=120
    ).json()
    for answer in (got, posted):
        assert [hit["chunk_id"] for hit in answer["results"]] == [
            hit["chunk_id"] for hit in plain["results"]
        ]
        for hit in answer["results"]:
            assert {"sides", "fusion", "terms", "words", "notes"} <= set(hit["explain"])
            assert set(hit["explain"]["words"]) == {"contextual", "static"}
    lexical = httpx.post(
        f"{sample_server.url}/search", json={**query, "mode": "lexical", "explain": True}
    ).json()
    assert "words" not in lexical["results"][0]["explain"]
    refused = httpx.post(f"{sample_server.url}/search", json={**query, "explain": "yes"})
    assert refused.status_code == 422 and "explain" in refused.text


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
        # numbers past 64 bits, and bounds (issue 12, item 9)
        (
            "GET",
            "/documents/9223372036854775807",
            {},
            404,
            "no document with id 9223372036854775807",
        ),
        (
            "GET",
            "/documents/9223372036854775808",
            {},
            422,
            "path document_id: Input should be less",
        ),
        ("GET", "/documents/99999999999999999999999", {}, 422, "path document_id: Input should"),
        ("GET", "/documents/0", {}, 422, "path document_id: Input should be greater than"),
        ("GET", "/documents/-1", {}, 422, "path document_id: Input should be greater than"),
        ("GET", "/documents/1.5", {}, 422, "path document_id: Input should be a valid integer"),
        ("GET", "/search", {"q": "bank", "k": 2**61}, 422, "query k: Input should be less than"),
        ("GET", "/search", {"q": "bank", "k": 10**30}, 422, "query k: Input should be less than"),
        ("GET", "/search", {"q": "bank", "k": 1001}, 422, "query k: Input should be less than"),
        ("GET", "/search", {"q": "bank", "k": 2.5}, 422, "query k: Input should be a valid"),
        ("GET", "/compare", {"q": "bank", "k": 2**61}, 422, "query k: Input should be less than"),
        ("POST", "/search", {"q": "bank", "k": 2**61}, 422, "body k: Input should be less than"),
        ("POST", "/search", {"q": "bank", "k": 2.5}, 422, "body k: Input should be a valid int"),
        ("POST", "/search", {"q": "bank", "k": 2.0}, 422, "body k: Input should be a valid int"),
        ("POST", "/search", {"q": "bank", "k": True}, 422, "body k: Input should be a valid int"),
        ("POST", "/search", {"q": "bank", "k": "3"}, 422, "body k: Input should be a valid int"),
        ("POST", "/search", {"q": 7}, 422, "body q: Input should be a valid string"),
        ("POST", "/search", {"q": "bank", "all_chunks": "yes"}, 422, "body all_chunks: Input"),
        ("POST", "/search", {"q": "bank", "mdoe": "static"}, 422, "body mdoe: Extra inputs"),
        # very long queries (item 13)
        ("GET", "/search", {"q": "b" * 4001}, 422, "query q: String should have at most 4000"),
        ("GET", "/compare", {"q": "b" * 4001}, 422, "query q: String should have at most 4000"),
        ("POST", "/search", {"q": "b" * 4001}, 422, "body q: String should have at most 4000"),
        # queries that draw nothing (item 14)
        ("GET", "/search", {"q": "\u200b"}, 422, "the query is empty"),
        ("GET", "/search", {"q": "\x1b\x00\u2060"}, 422, "the query is empty"),
        ("POST", "/search", {"q": "\ufeff\u200d", "mode": "lexical"}, 422, "the query is empty"),
        ("GET", "/compare", {"q": "\u200b"}, 422, "the query is empty"),
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


def test_the_longest_query_is_answered_in_every_way(sample_server):
    longest = ("erosion bank river flood " * 200)[:4000]
    got = httpx.get(f"{sample_server.url}/search", params={"q": longest, "mode": "lexical"})
    assert got.status_code == 200 and got.json()["results"]
    posted = httpx.post(f"{sample_server.url}/search", json={"q": longest, "mode": "lexical"})
    assert posted.status_code == 200 and posted.json()["results"]
    wide = "北" * 4000  # 36 KB once percent-encoded in the address
    got = httpx.get(f"{sample_server.url}/search", params={"q": wide, "mode": "lexical"})
    assert got.status_code == 200


def test_a_request_body_over_the_cap_is_a_413(sample_server):
    """A 1 MB query is refused before it is parsed, let alone searched (item 13)."""
    search = f"{sample_server.url}/search"
    huge = httpx.post(search, json={"q": "bank " * 200_000})
    assert huge.status_code == 413
    assert huge.json() == {"detail": "the request body is over the 65,536-byte limit"}

    def chunked():  # no Content-Length: the size is only known while reading
        yield b'{"q": "'
        for _ in range(100):
            yield b"bank " * 1000
        yield b'"}'

    streamed = httpx.post(search, content=chunked(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413
    assert httpx.post(search, json={"q": "bank", "mode": "lexical"}).status_code == 200


# -- DNS rebinding and cross-origin requests (item 11) ----------------------------------


def port_of(server) -> int:
    return int(server.url.rsplit(":", 1)[1])


@pytest.mark.parametrize("path", ["/documents/1", "/search?q=bank", "/info", "/", "/health"])
@pytest.mark.parametrize(
    "host", ["attacker.example:{port}", "attacker.example", "127.0.0.1.nip.io:{port}", ""]
)
def test_a_host_the_server_was_not_started_for_is_refused(sample_server, path, host):
    host = host.format(port=port_of(sample_server))
    got = httpx.get(sample_server.url + path, headers={"Host": host})
    assert got.status_code == 400
    assert got.json() == {"detail": f"this server does not answer for host {host!r}"}


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "LocalHost", "[::1]"])
def test_loopback_names_with_the_port_are_answered(sample_server, name):
    got = httpx.get(
        f"{sample_server.url}/documents/1", headers={"Host": f"{name}:{port_of(sample_server)}"}
    )
    assert got.status_code == 200


def test_a_loopback_name_with_another_port_is_refused(sample_server):
    other = port_of(sample_server) + 1
    got = httpx.get(f"{sample_server.url}/documents/1", headers={"Host": f"localhost:{other}"})
    assert got.status_code == 400


def raw_request(server, head: str) -> bytes:
    """Send a hand-written HTTP/1.1 request head (httpx refuses to write a bad one)."""
    with socket.create_connection(("127.0.0.1", port_of(server)), timeout=30) as connection:
        connection.sendall(head.encode("latin-1"))
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def test_two_host_headers_are_refused(sample_server):
    own = f"127.0.0.1:{port_of(sample_server)}"
    for hosts in ([own, "attacker.example"], ["attacker.example", own], [own, own]):
        head = "GET /documents/1 HTTP/1.1\r\n"
        head += "".join(f"Host: {host}\r\n" for host in hosts)
        answer = raw_request(sample_server, head + "Connection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]


@pytest.mark.parametrize(
    "origin",
    ["http://attacker.example:{port}", "http://attacker.example", "null", "http://127.0.0.1:1"],
)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_cross_origin_request_is_a_403(sample_server, origin, method):
    origin = origin.format(port=port_of(sample_server))
    url = f"{sample_server.url}/search"
    headers = {"Origin": origin}
    if method == "GET":
        got = httpx.get(url, params={"q": "bank"}, headers=headers)
    else:
        got = httpx.post(url, json={"q": "bank"}, headers=headers)
    assert got.status_code == 403
    assert got.json() == {"detail": f"cross-origin request from {origin!r} refused"}


def test_a_same_origin_request_is_answered(sample_server):
    got = httpx.post(
        f"{sample_server.url}/search",
        json={"q": "bank", "mode": "lexical"},
        headers={"Origin": sample_server.url},
    )
    assert got.status_code == 200


def test_allowed_hosts_are_answered_and_a_token_may_be_non_ascii(token_server):
    """`serve --allowed-host notes.example --allowed-host proxy.example:8443 --token
    pässwort` (items 11 and 15): a name alone is answered with the server's port or
    none, a name with a port only with that port."""
    url, port = token_server.url, port_of(token_server)
    utf8 = {"Authorization": "Bearer pässwort".encode()}
    for host in (f"notes.example:{port}", "notes.example", "NOTES.Example", "proxy.example:8443"):
        got = httpx.get(f"{url}/documents/1", headers={**utf8, "Host": host})
        assert got.status_code == 200, host
    for host in ("other.example", "notes.example:8443", f"proxy.example:{port}"):
        got = httpx.get(f"{url}/documents/1", headers={**utf8, "Host": host})
        assert got.status_code == 400, host
    latin1 = {"Authorization": "Bearer pässwort".encode("latin-1")}
    wrong = httpx.get(f"{url}/documents/1", headers=latin1)
    assert wrong.status_code == 401 and wrong.json() == {"detail": "wrong bearer token"}
    search = httpx.get(f"{url}/search", params={"q": "bank", "k": 2}, headers=utf8)
    assert search.status_code == 200 and len(search.json()["results"]) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--allowed-host", "http://notes.example/"],
            "--allowed-host 'http://notes.example/' is not",
        ),
        (["--allowed-host", "notes.example:http"], "is not a host name or IP address"),
        (["--allowed-host", ""], "is not a host name or IP address"),
        (["--token", " s3cret"], "the token starts or ends with a space"),
        (["--token", "s3\ncret"], "the token holds a control character"),
    ],
)
def test_serve_refuses_unusable_hosts_and_tokens(sample_index, args, message):
    result = CliRunner().invoke(cli, ["serve", "--index", str(sample_index), *args])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and message in errors[0], result.stderr


def test_a_request_head_far_over_the_cap_is_a_400_from_the_http_layer(sample_server):
    head = f"GET /search?q={'b' * 1_000_000} HTTP/1.1\r\nHost: 127.0.0.1:{port_of(sample_server)}"
    try:
        answer = raw_request(sample_server, head + "\r\nConnection: close\r\n\r\n")
    except ConnectionResetError:  # the server may close before reading all of it
        return
    assert answer.startswith(b"HTTP/1.1 400 ")


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/search?q=bank&mode=lexical", "/nope"])
def test_no_other_site_may_frame_or_embed_an_answer(sample_server, path):
    """A hostile page cannot frame the search page (clickjacking) nor pull an answer in
    with <script> or <img>; refusals carry the same headers."""
    for headers in ({}, {"Host": "attacker.example"}):
        got = httpx.get(sample_server.url + path, headers=headers)
        assert got.headers["x-frame-options"] == "DENY"
        assert got.headers["content-security-policy"] == "frame-ancestors 'none'"
        assert got.headers["cross-origin-resource-policy"] == "same-origin"
        assert got.headers["x-content-type-options"] == "nosniff"


def test_answers_go_out_without_waiting_for_nagle():
    """asyncio sets TCP_NODELAY on accepted sockets only when the listener says TCP; a
    keep-alive client otherwise waited ~40 ms for each answer's body."""
    import asyncio

    from search.server.app import listen

    async def accepted_options() -> tuple[int, int]:
        seen: asyncio.Future = asyncio.get_running_loop().create_future()

        def connected(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted = writer.get_extra_info("socket")
            seen.set_result(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        with listen("127.0.0.1", 0) as listener:
            server = await asyncio.start_server(connected, sock=listener)
            async with server:
                _reader, writer = await asyncio.open_connection(*listener.getsockname()[:2])
                nodelay = await asyncio.wait_for(seen, 30)
                writer.close()
                return listener.proto, nodelay

    proto, nodelay = asyncio.run(accepted_options())
    assert proto == socket.IPPROTO_TCP
    assert nodelay != 0


def test_search_filters_and_min_similarity_by_query_string_and_body(sample_server):
    finance = str(SAMPLE_CORPUS / "finance")
    params = [("q", "bank"), ("k", "5"), ("under", finance), ("type", "md"), ("type", "html")]
    got = httpx.get(f"{sample_server.url}/search", params=params).json()
    assert len(got["results"]) == 4 and got["filters"]["type"] == ["md", "html"]
    assert all(hit["path"].startswith(finance + "/") for hit in got["results"])
    body = {"q": "bank", "k": 5, "under": finance, "path": "*.txt", "min_similarity": 0.1}
    posted = httpx.post(f"{sample_server.url}/search", json=body).json()
    assert [Path(hit["path"]).name for hit in posted["results"]] == ["mortgage-basics.txt"]
    assert posted["results"][0]["similarity"] >= 0.1 and posted["min_similarity"] == 0.1
    relative = httpx.get(f"{sample_server.url}/search", params={"q": "bank", "under": "x"})
    assert relative.status_code == 422 and "absolute" in relative.json()["detail"]
