"""Real `ctxsearch mcp` processes and the MCP SDK's own clients (stdio, streamable HTTP)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.conftest import ROOT
from tests.support.serving import free_port

READY = "MCP over streamable HTTP at "


@asynccontextmanager
async def stdio_session(index: Path | str, *args: str) -> AsyncIterator[ClientSession]:
    """An initialised session with `ctxsearch mcp --index INDEX ARGS` over its stdio."""
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "search", "mcp", "--index", str(index), *args],
        env=dict(os.environ),
        cwd=str(ROOT),
    )
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


@contextmanager
def http_server(index: Path | str, *args: str, said: list[str] | None = None) -> Iterator[str]:
    """`ctxsearch mcp --http` on a free port; its URL (…/mcp) once it says it listens.
    The lines it writes on stderr are added to `said` as they come."""
    port = free_port()
    command = [sys.executable, "-m", "search", "mcp", "--index", str(index), "--http"]
    process = subprocess.Popen(
        [*command, "--port", str(port), *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert process.stderr is not None
        said = [] if said is None else said
        for line in process.stderr:  # the socket listens before this line is written
            said.append(line)
            if READY in line:
                break
        else:
            raise RuntimeError(f"the MCP server exited: {''.join(said)}")
        # keep reading what it says, so that a full pipe never stops it
        threading.Thread(target=said.extend, args=(process.stderr,), daemon=True).start()
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    """An initialised session with the MCP server at `url` over streamable HTTP."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        create_mcp_http_client(headers=headers) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
