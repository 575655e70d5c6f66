"""How many times a search asks its store: once for its candidates, once for what its hits
show, in every mode and on every backend (each call counted at the snapshot's surface)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from indexer import Indexer
from search.engine import Searcher


class CountingSnapshot:
    """A snapshot that notes the name of every method called on it, then calls it."""

    def __init__(self, snapshot: Any, calls: list[str]):
        self._snapshot = snapshot
        self._calls = calls

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._snapshot, name)
        if not callable(found):
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(name)
            return found(*args, **kwargs)

        return counted


def store_reads(searcher: Searcher, query: str, **options: Any) -> list[str]:
    """The snapshot methods one search calls, in order."""
    calls: list[str] = []
    opened = searcher.store.snapshot

    @contextmanager
    def counting(*args: Any, **kwargs: Any) -> Iterator[CountingSnapshot]:
        with opened(*args, **kwargs) as snapshot:
            yield CountingSnapshot(snapshot, calls)

    searcher.store.snapshot = counting  # type: ignore[method-assign]
    try:
        response = searcher.search(query, **options)
    finally:
        del searcher.store.snapshot
    assert response.results
    return calls


@pytest.mark.parametrize("mode", ["hybrid", "contextual", "lexical", "static"])
def test_a_search_reads_its_candidates_then_what_its_hits_show(any_index, notes, fast_model, mode):
    Indexer(any_index, model=fast_model).index_folder(notes)
    (notes / "copy.txt").write_text((notes / "river.txt").read_text())
    Indexer(any_index, model=fast_model).index_folder(notes)
    with Searcher(any_index) as searcher:
        reads = store_reads(searcher, "river bank money", mode=mode, k=3)
        filtered = store_reads(searcher, "river bank", mode=mode, path=["*.txt"])
    assert reads == ["search", "shown"], reads
    assert filtered == ["search", "shown"], filtered
