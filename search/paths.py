"""Where the default index lives, how paths are shown to people, and how a path given
on the command line is found as the index names it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from indexer import config

if TYPE_CHECKING:
    from indexer.store.base import Snapshot, Store

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


def given_path(path: Path | str) -> str:
    """A path from the command line made absolute, no link in it resolved, as text (see
    `as_indexed`, which finds how the index names it)."""
    import os

    from indexer.reading.sources import path_text

    return path_text(os.path.abspath(Path(path).expanduser()))


def as_indexed(snapshot: Snapshot, given: str) -> str:
    """A path from the command line (a `given_path`) as the index names it: the path a
    hit shows is taken back as it is.

    A link is the link, never what it leads to: the walk indexes a file link under its
    own path, and a root given as a link is recorded as the link. So the path is taken
    as given (below a root given as a link), or with the links of the folders above it
    resolved (as other roots are recorded), whichever the index holds a document at or
    under; else, when resolving every link names a root (an index made before roots
    given as a link were kept as the link), that root; else as given.
    """
    from indexer.reading.links import spellings
    from indexer.reading.sources import path_text
    from indexer.store.filters import SearchFilter

    named = [path_text(spelling) for spelling in spellings(given)]
    for spelling in named:
        if snapshot.has_documents(SearchFilter(under=(spelling,))):
            return spelling
    resolved = path_text(Path(given).resolve())
    return resolved if resolved in snapshot.roots() else given


def places_as_indexed(store: Store, places: tuple[str, ...]) -> tuple[str, ...]:
    """Each of `places` (`given_path`s) `as_indexed`."""
    if not places:
        return places
    with store.snapshot([]) as snapshot:
        return tuple(as_indexed(snapshot, place) for place in places)
