"""Installed like any tool: a wheel built from the repository, installed into a fresh
virtual environment outside it, indexes, queries, serves and answers MCP from a folder
elsewhere, with the default model, the page's files and the ONNX query model's cache.

Slow (a few minutes: the environment installs torch and every dependency), so it runs
with `make eval`'s slow tests, not in the default suite.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import ROOT
from tests.support.serving import free_port

pytestmark = pytest.mark.slow

# The CPU build on local disk; an unpinned torch would pull a multi-GB CUDA build.
TORCH = "torch==2.13.0"
NOTES = {
    "herons.md": "# Herons\n\nHerons stand still in shallow water and spear fish with "
    "their long beaks.\n",
    "savings.txt": "A savings account at the bank pays interest on the money deposited.\n",
}


def run(command: list[str | Path], cwd: Path, env: dict[str, str]) -> str:
    """Run a command to its end; its stdout (a failure shows what it said)."""
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, f"{command}: {done.stdout}\n{done.stderr}"
    return done.stdout


def source_copy(destination: Path) -> Path:
    """The repository's files (tracked, and new ones not ignored) copied: the build leaves
    its `build/` and `*.egg-info` there, not in the clone."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name)
    return destination


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtual environment (no system packages) with torch and the wheel."""
    base = tmp_path_factory.mktemp("install")
    source = source_copy(base / "source")
    pip_env = dict(os.environ)
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", base / "dist", source],
        base,
        pip_env,
    )
    [wheel] = (base / "dist").glob("ctxsearch-*.whl")
    run([sys.executable, "-m", "venv", base / "env"], base, pip_env)
    pip = [base / "env" / "bin" / "python", "-m", "pip", "install", "--quiet"]
    run([*pip, TORCH], base, pip_env)
    run([*pip, wheel], base, pip_env)
    return base / "env"


def user_env(home: Path) -> dict[str, str]:
    """A user's shell: the environment's bin first on PATH, a home of its own, offline."""
    keep = {name: os.environ[name] for name in ("LANG", "TMPDIR") if name in os.environ}
    return keep | {
        "PATH": f"{home.parent / 'env' / 'bin'}:/usr/bin:/bin",
        "HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


def test_an_installed_wheel_indexes_queries_serves_and_answers_mcp_elsewhere(installed, tmp_path):
    home = installed.parent / "home"
    work = home / "elsewhere"
    (work / "notes").mkdir(parents=True)
    for name, value in NOTES.items():
        (work / "notes" / name).write_text(value)
    env = user_env(home)
    where = run(["python", "-c", "import search, indexer; print(search.__file__)"], work, env)
    assert Path(where.strip()).is_relative_to(installed), where  # not the clone's

    run(["ctxsearch", "index", "notes", "--index", "ix"], work, env)
    found = json.loads(
        run(
            ["ctxsearch", "query", "where do birds catch fish", "--index", "ix", "--json"],
            work,
            env,
        )
    )
    assert found["results"][0]["path"].endswith("herons.md")
    exports = list((home / ".cache" / "ctxsearch" / "models").glob("onnx-*/*.onnx"))
    assert exports, "the query model's ONNX export is in the user's cache"

    port = free_port()
    command = ["ctxsearch", "serve", "--index", "ix", "--port", str(port)]
    server = subprocess.Popen(command, cwd=work, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        for line in server.stderr:  # the socket listens before this line is written
            if "serving http" in line:
                break
        else:
            pytest.fail("serve stopped before it served")
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            page = client.get("/")
            assert page.status_code == 200 and "<html" in page.text.lower()
            for name in ("app.js", "style.css"):
                assert client.get(f"/static/{name}").status_code == 200, name
            answer = client.get("/search", params={"q": "interest on money", "k": 1}).json()
            assert answer["results"][0]["path"].endswith("savings.txt")
    finally:
        server.terminate()
        server.wait(timeout=30)

    tools = asyncio.run(mcp_tool_names(work, env))
    assert {"search", "read"} <= tools


async def mcp_tool_names(work: Path, env: dict[str, str]) -> set[str]:
    """The tools `ctxsearch mcp` lists over its stdio."""
    server = StdioServerParameters(
        command=shutil.which("ctxsearch", path=env["PATH"]) or "ctxsearch",
        args=["mcp", "--index", "ix"],
        env=env,
        cwd=str(work),
    )
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
    return {tool.name for tool in listed.tools}
