"""`ctxsearch loadtest`, run as a second process against a running server."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT, TOKEN
from tests.support.serving import free_port


def loadtest(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "search", "lab", "loadtest", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_concurrent_clients_for_a_fixed_time_without_errors(sample_server):
    done = loadtest(sample_server.url, "--clients", "4", "--seconds", "2", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["clients"] == 4 and report["mode"] == "hybrid"
    assert report["requests"] >= 4 and report["errors"] == 0
    assert 0 < report["p50_ms"] <= report["p95_ms"] <= report["max_ms"]
    assert report["requests_per_second"] > 0


def test_the_text_report_names_every_figure(sample_server):
    done = loadtest(sample_server.url, "-c", "2", "-s", "1", "--mode", "lexical")
    assert done.returncode == 0, done.stderr
    for word in ("2 clients", "requests", "0 errors", "req/s", "p50", "p95"):
        assert word in done.stdout


def test_failed_requests_are_counted_and_exit_1(sample_server):
    done = loadtest(sample_server.url, "-c", "2", "-s", "1", "--query", "   ", "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["errors"] == report["requests"] > 0
    assert done.stderr.startswith("Error: no request succeeded (")
    assert "HTTP 422" in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_non_ascii_token_is_sent_as_utf8(token_server):
    """`loadtest --token pässwort` against `serve --token pässwort` (issue 12, item 15)."""
    done = loadtest(token_server.url, "-c", "2", "-s", "1", "--token", TOKEN, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["requests"] > 0 and report["errors"] == 0


@pytest.mark.parametrize("token", [None, "passwort", "pässwort2"])
def test_when_no_request_succeeds_it_fails_loudly(token_server, token):
    args = ("--token", token) if token else ()
    done = loadtest(token_server.url, "-c", "2", "-s", "1", *args)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: no request succeeded (")
    assert "HTTP 401" in done.stderr and len(done.stderr.splitlines()) == 1
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-k", "1001"], "1001 is not in the range 1<=x<=1000"),
        (["-k", "3000000000000000000"], "is not in the range 1<=x<=1000"),
        (["--token", "a\tb"], "the token holds a control character"),
    ],
)
def test_bad_options_are_usage_errors(args, message):
    done = loadtest(f"http://127.0.0.1:{free_port()}", "-s", "1", *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_no_server_is_a_one_line_error():
    done = loadtest(f"http://127.0.0.1:{free_port()}", "-s", "1")
    assert done.returncode == 1
    assert done.stderr.startswith("Error: http://127.0.0.1:")
    assert "no ctxsearch server answers" in done.stderr
    assert "Traceback" not in done.stderr
