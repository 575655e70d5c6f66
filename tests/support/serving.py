"""Start a real `ctxsearch serve` process on 127.0.0.1 and wait until it answers."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.conftest import ROOT

_START_TIMEOUT = 300.0


@dataclass(frozen=True)
class RunningServer:
    """A server process and the URL it answers at."""

    url: str
    process: subprocess.Popen
    log: Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running_server(index_dir: Path, log: Path, *args: str) -> Iterator[RunningServer]:
    """`ctxsearch serve --index index_dir ARGS` on a free port, stopped on exit."""
    port = free_port()
    command = [sys.executable, "-m", "search", "serve", "--index", str(index_dir)]
    command += ["--port", str(port), *args]
    with open(log, "wb") as output:
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT, env=dict(os.environ)
        )
    server = RunningServer(f"http://127.0.0.1:{port}", process, log)
    try:
        _wait_until_healthy(server)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_healthy(server: RunningServer) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the server exited: {server.log.read_text()}")
        try:
            if httpx.get(f"{server.url}/health", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        # the next look at /health in 0.2 s, or at once if the server exits
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.process.wait(timeout=0.2)
    raise RuntimeError(f"the server did not answer in time: {server.log.read_text()}")
