"""`ctxsearch loadtest`, run as a second process against a running server."""

import json
import subprocess
import sys

from tests.conftest import ROOT
from tests.serving import free_port


def loadtest(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "search", "loadtest", *args],
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
    assert "HTTP 422" in done.stderr


def test_no_server_is_a_one_line_error():
    done = loadtest(f"http://127.0.0.1:{free_port()}", "-s", "1")
    assert done.returncode == 1
    assert done.stderr.startswith("Error: http://127.0.0.1:")
    assert "no ctxsearch server answers" in done.stderr
    assert "Traceback" not in done.stderr
