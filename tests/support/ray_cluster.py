"""A real Ray cluster on 127.0.0.1 for the tests: a head node and one more worker node.

Each node is a `ray start --block` process of its own (the head with one CPU, the worker
node with one more), so that the two encoding actors of a run live under two raylets as
they would on two machines. Ray 2.60 turns 127.0.0.1 in an address into this machine's
own address, so the nodes also answer there (this machine only).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT


@dataclass
class RayCluster:
    """The address drivers connect to, and the node processes (head first)."""

    address: str
    nodes: list[subprocess.Popen]
    temp_dir: Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _ray_bin() -> str:
    candidate = Path(sys.executable).parent / "ray"
    return str(candidate) if candidate.exists() else "ray"


def _node_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "RAY_USAGE_STATS_ENABLED": "0",
            # A throw-away cluster on this machine: no token to hand to every driver.
            "RAY_AUTH_MODE": "disabled",
        }
    )
    env.pop("CTXSEARCH_PAUSE_AT", None)
    env.pop("CTXSEARCH_KILL_AT", None)
    env.update(extra or {})
    return env


def _start_node(arguments: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with open(log, "ab") as output:
        return subprocess.Popen(
            [_ray_bin(), "start", "--block", "--disable-usage-stats", *arguments],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the raylet and its workers
        )


def _wait_for_nodes(address: str, count: int, nodes: list[subprocess.Popen], log: Path) -> None:
    script = (
        "import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR', "
        "log_to_driver=False); print(sum(1 for n in ray.nodes() if n['Alive']))"
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        for node in nodes:
            if node.poll() is not None:
                raise RuntimeError(f"a Ray node exited early:\n{log.read_text()[-3000:]}")
        probe = subprocess.run(
            [sys.executable, "-c", script, address],
            capture_output=True,
            text=True,
            env=_node_env(),
            timeout=120,
        )
        alive = probe.stdout.strip()
        if probe.returncode == 0 and alive.isdigit() and int(alive) >= count:
            return
        time.sleep(1)
    raise RuntimeError(f"the Ray cluster did not come up:\n{log.read_text()[-3000:]}")


@contextmanager
def running_cluster(worker_env: dict[str, str] | None = None) -> Iterator[RayCluster]:
    """A head (1 CPU) and a worker node (1 CPU) on 127.0.0.1, stopped on exit.

    `worker_env` is added to the worker node's environment (and so its actors').
    """
    temp_dir = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # short: socket paths
    log = temp_dir / "nodes.log"
    port = free_port()
    address = f"127.0.0.1:{port}"
    common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--num-gpus=0"]
    nodes: list[subprocess.Popen] = []
    try:
        nodes.append(
            _start_node(
                [
                    "--head",
                    f"--port={port}",
                    "--include-dashboard=false",
                    f"--temp-dir={temp_dir}",
                    *common,
                ],
                _node_env(),
                log,
            )
        )
        _wait_for_nodes(address, 1, nodes, log)
        nodes.append(_start_node([f"--address={address}", *common], _node_env(worker_env), log))
        _wait_for_nodes(address, 2, nodes, log)
        yield RayCluster(address, nodes, temp_dir)
    finally:
        for node in reversed(nodes):
            stop_node(node)
        shutil.rmtree(temp_dir, ignore_errors=True)


def stop_node(node: subprocess.Popen) -> None:
    """End a node: SIGTERM to its process group (`ray start`, raylet, GCS ...), then
    SIGKILL after 5 s (a head often lingers). Its workers exit when their raylet is gone."""
    if node.poll() is not None:
        return
    try:
        os.killpg(node.pid, signal.SIGTERM)
        node.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(node.pid, signal.SIGKILL)
        node.wait(timeout=20)
    except ProcessLookupError:
        pass
