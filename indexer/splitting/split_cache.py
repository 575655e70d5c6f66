"""What splitting learnt of texts it has seen, kept by a long-lived writer (`watch`).

Cutting a section into passages depends only on the section's own text and place in the
outline (`indexer.splitting.passages`), so a writer that splits the same file again after
an edit can take, for every section whose text is unchanged, the token spans it found
before, and for every unit of cutting whose sections are all unchanged, the passages it
cut before (moved to where the unit now starts), and for every passage whose text and
trail are unchanged, what the model reads for it (`indexer.splitting.model_input`, which
tokenises it up to three times). Only the sections an edit touched are tokenised again,
and only the units that hold them are cut again: what the split of an edited file costs
follows the edit, not the file.

The cache holds what it was given last, within a budget of characters (least recently
used out first), and only for one tokenizer: given another, it starts empty.

One split uses the cache at a time (`held`). A split that only fills it ahead (`watch`
warming large files at start) gives way: it stops at its next section, raising
`GaveWay`, as soon as another split asks for the cache, so that an edit never waits for
a warm-up (what the warm-up tokenised is kept: the edit's split is spared it).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from indexer.splitting.boundaries import TokenSpans
from indexer.splitting.model_input import model_input

# About 5 bytes held per character of text (its spans, as int64 pairs, and the text).
DEFAULT_BUDGET_CHARACTERS = 16_000_000


class GaveWay(Exception):
    """A split that gives way (`SplitCache.held`) stopped: another split wants the cache."""


class SplitCache:
    """Token spans by section text and passages by unit, for one tokenizer."""

    def __init__(self, budget_characters: int = DEFAULT_BUDGET_CHARACTERS):
        self.budget = budget_characters
        self._tokenizer: Callable[..., Any] | None = None
        self.tokenised = 0  # how many section texts were tokenised (not found here)
        self._lock = threading.Lock()
        self._counting = threading.Lock()
        self._wanting = 0  # splits waiting for the cache, or holding it, that do not give way
        self._giving_way: Callable[[], bool] | None = None
        self._sections: _Budgeted[str, np.ndarray] = _Budgeted(budget_characters)
        self._units: _Budgeted[Hashable, list[tuple[int, int, tuple[str, ...]]]] = _Budgeted(
            budget_characters
        )
        self._inputs: _Budgeted[tuple[str, str | None, int], str] = _Budgeted(budget_characters)

    @contextmanager
    def held(self, give_way: Callable[[], bool] | None = None) -> Iterator[SplitCache]:
        """The cache, for one split at a time. With `give_way`, the split is one that may
        stop (a warm-up): `GaveWay` rises at its next section once another split wants
        the cache or `give_way()` is true, and at once if one wants it already."""
        if give_way is None:
            with self._counting:
                self._wanting += 1
            try:
                with self._lock:
                    yield self
            finally:
                with self._counting:
                    self._wanting -= 1
            return
        with self._lock:
            self._giving_way = give_way
            try:
                self.check_way()
                yield self
            finally:
                self._giving_way = None

    def check_way(self) -> None:
        """Raise `GaveWay` if the split holding the cache gives way and should now."""
        giving_way = self._giving_way
        if giving_way is not None and (self._wanting or giving_way()):
            raise GaveWay

    def for_tokenizer(self, token_spans: Callable[..., Any]) -> SplitCache:
        """This cache, emptied first if it was filled with another tokenizer."""
        if token_spans != self._tokenizer:
            self._sections.clear()
            self._units.clear()
            self._inputs.clear()
            self._tokenizer = token_spans
        return self

    def spans(self, piece: str, token_spans: Callable[[str], Any]) -> np.ndarray:
        """The (n, 2) spans of `piece`'s tokens, relative to it: cached, or found now."""
        found = self._sections.get(piece)
        if found is None:
            self.check_way()
            found = np.asarray(token_spans(piece), dtype=np.int64).reshape(-1, 2)
            self.tokenised += 1
            self._sections.put(piece, found, len(piece))
        return found

    def model_input(
        self, text: str, section: str | None, token_spans: TokenSpans, max_tokens: int
    ) -> str:
        """`model_input(text, section, token_spans, max_tokens)`: cached, or found now."""
        key = (text, section, max_tokens)
        found = self._inputs.get(key)
        if found is None:
            self.check_way()
            trail = self.spans(section, token_spans) if section and section.strip() else None
            found = model_input(text, section, token_spans, max_tokens, trail)
            self._inputs.put(key, found, len(found))
        return found

    def unit(self, key: Hashable) -> list[tuple[int, int, tuple[str, ...]]] | None:
        """The passages cut before from the unit of `key`: (start, end, trail) each,
        offsets relative to the unit's start; None if not known."""
        return self._units.get(key)

    def remember_unit(
        self, key: Hashable, passages: list[tuple[int, int, tuple[str, ...]]], characters: int
    ) -> None:
        """Keep the passages of a unit of `characters` characters."""
        self._units.put(key, passages, characters)


class _Budgeted(OrderedDict):
    """A least-recently-used mapping whose values' declared sizes stay within a budget."""

    def __init__(self, budget: int):
        super().__init__()
        self.budget = budget
        self.used = 0
        self._sizes: dict[Hashable, int] = {}

    def get(self, key: Hashable, default: Any = None) -> Any:
        if key not in self:
            return default
        self.move_to_end(key)
        return self[key]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        if size > self.budget:
            return
        if key in self:
            self.used -= self._sizes[key]
        self[key] = value
        self.move_to_end(key)
        self._sizes[key] = size
        self.used += size
        while self.used > self.budget:
            old, _ = self.popitem(last=False)
            self.used -= self._sizes.pop(old)

    def clear(self) -> None:
        super().clear()
        self._sizes.clear()
        self.used = 0
