"""Where the default index lives, and how paths are shown to people."""

from __future__ import annotations

import os
from pathlib import Path

INDEX_ENV = "CTXSEARCH_INDEX"


def default_index_dir() -> Path:
    """$CTXSEARCH_INDEX, else $XDG_DATA_HOME/ctxsearch/index (~/.local/share/ctxsearch/index)."""
    if os.environ.get(INDEX_ENV):
        return Path(os.environ[INDEX_ENV]).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "ctxsearch" / "index"


def display_path(path: str) -> str:
    """A path relative to the working directory when it lies below it, else as stored."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
