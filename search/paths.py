"""Where the default index lives, and how paths are shown to people."""

from __future__ import annotations

from pathlib import Path

from indexer import config

INDEX_ENV = config.INDEX.name


def default_index() -> str | Path:
    """$CTXSEARCH_INDEX (a folder or a database URL), else $XDG_DATA_HOME/ctxsearch/index
    (~/.local/share/ctxsearch/index)."""
    return index_target(config.index_location())


def index_target(value: str) -> str | Path:
    """What `--index` names: a database URL as given, else a folder path."""
    from indexer.store.backends import is_database_url

    return value if is_database_url(value) else Path(value).expanduser()


def display_path(path: str) -> str:
    """A path for a terminal: relative to the working directory when it lies below it,
    else as stored, with control characters and the like shown as escapes
    (`search.text.terminal_text`), so a file name cannot drive the terminal."""
    from search.text import terminal_text

    try:
        shown = str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        shown = str(path)
    return terminal_text(shown)
