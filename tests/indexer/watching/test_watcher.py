"""The watch as a library: an app keeps an index in sync with a folder from Python
(`Watcher`), hears what happens through its `WatchListener`, and stops it from another
thread. (`ctxsearch watch`, the same watch behind the command line, is tested as a real
process in tests/search/cli/test_watch.py.)"""

from __future__ import annotations

import queue
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from indexer import SourceNotFound
from indexer.runs.folders import IndexSummary
from indexer.runs.indexer import Indexer
from indexer.watching.listener import WatchListener
from indexer.watching.watcher import Watcher
from tests.support.watching import PATIENCE_SECONDS


class Heard(WatchListener):
    """What the watch told, in order: ("run", root, summary) and ("gone", root, removed)."""

    def __init__(self) -> None:
        self.told: queue.Queue[tuple] = queue.Queue()

    def run_done(self, root: Path, summary: IndexSummary) -> None:
        self.told.put(("run", root, summary))

    def folder_gone(self, root: Path, removed: int) -> None:
        self.told.put(("gone", root, removed))

    def until(self, condition: Callable[[tuple], bool]) -> tuple:
        """The first thing told from now on that meets `condition`."""
        while not condition(told := self.told.get(timeout=PATIENCE_SECONDS)):
            pass
        return told


@pytest.fixture
def watched(tmp_path, fast_model) -> Iterator[tuple[Path, Watcher, Heard]]:
    """A `Watcher` running in a thread over a folder of one file: (folder, watcher, what
    it told); stopped, and its thread joined, at the end."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water and wait for fish.")
    heard = Heard()
    indexer = Indexer(tmp_path / "ix", model=fast_model)
    watcher = Watcher(indexer, [docs], debounce_ms=50, listener=heard)
    thread = threading.Thread(target=watcher.run, name="test-watch")
    thread.start()
    try:
        yield docs, watcher, heard
    finally:
        watcher.stop()
        thread.join(PATIENCE_SECONDS)
    assert not thread.is_alive()


def test_a_watch_started_from_python_indexes_the_folder_then_each_change(watched):
    docs, watcher, heard = watched
    _, root, first = heard.until(lambda told: told[0] == "run")
    assert (root, first.added, first.total_documents) == (docs, 1, 1)
    (docs / "egrets.md").write_text("Egrets follow cattle across the wet field.")
    _, root, later = heard.until(lambda told: told[0] == "run" and told[2].total_documents == 2)
    assert (root, later.added) == (docs, 1) and not watcher.in_run


def test_a_folder_deleted_under_a_watch_is_told_and_leaves_the_index(watched):
    docs, _watcher, heard = watched
    heard.until(lambda told: told[0] == "run")
    shutil.rmtree(docs)
    assert heard.until(lambda told: told[0] == "gone") == ("gone", docs, 1)
    _, _root, summary = heard.until(lambda told: told[0] == "run")
    assert summary.missing and summary.total_documents == 0


def test_a_path_that_is_no_folder_is_refused_before_anything_is_written(tmp_path, fast_model):
    indexer = Indexer(tmp_path / "ix", model=fast_model)
    with pytest.raises(SourceNotFound, match="no such file or folder"):
        Watcher(indexer, [tmp_path / "missing"])
    assert not (tmp_path / "ix").exists()


def test_a_file_is_watched_as_a_root_unless_a_folder_holds_it(tmp_path, fast_model):
    """A file given with the folder that holds it is that folder's; a file under an
    indexed folder that is not watched is refused (that folder's runs index it)."""
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "todo.md").write_text("Buy bread.")
    indexer = Indexer(tmp_path / "ix", model=fast_model)
    alone = Watcher(indexer, [loose / "todo.md"])
    assert (alone.roots, alone.files) == ([loose / "todo.md"], {loose / "todo.md"})
    both = Watcher(indexer, [loose / "todo.md", loose])
    assert (both.roots, both.files) == ([loose], set())
    indexer.index_folder(loose)
    with pytest.raises(SourceNotFound, match=r"todo\.md: under the indexed folder .*loose"):
        Watcher(indexer, [loose / "todo.md"])
