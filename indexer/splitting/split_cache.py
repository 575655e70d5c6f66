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

A new process starts with an empty cache; for a large document it can recall what a
tokenizer made of its texts last time (`recall`, from a `TokenMemo` file, which the split
keeps up to date when it had to tokenise much: `keep`), so that its first split of the
document tokenises only what changed since (the cutting itself is done again).

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
from indexer.splitting.token_memo import TokenMemo, digest

# About 5 bytes held per character of text (its spans, as int64 pairs, and the text).
DEFAULT_BUDGET_CHARACTERS = 16_000_000
# A split that tokenised more than this share of the texts it looked at writes the
# document's memo again (a cold split, a large change); one around an edit does not.
MEMO_REWRITE_SHARE = 0.1


class GaveWay(Exception):
    """A split that gives way (`SplitCache.held`) stopped: another split wants the cache."""


class SplitCache:
    """Token spans by section text and passages by unit, for one tokenizer."""

    def __init__(self, budget_characters: int = DEFAULT_BUDGET_CHARACTERS):
        self.budget = budget_characters
        self._tokenizer: Callable[..., Any] | None = None
        self.tokenised = 0  # how many section texts were tokenised (not found here)
        self.counted = 0  # how many other texts were tokenised to count their tokens
        self._lock = threading.Lock()
        self._counting = threading.Lock()
        self._wanting = 0  # splits waiting for the cache, or holding it, that do not give way
        self._giving_way: Callable[[], bool] | None = None
        self._sections: _Budgeted[str, np.ndarray] = _Budgeted(budget_characters)
        self._units: _Budgeted[Hashable, list[tuple[int, int, tuple[str, ...]]]] = _Budgeted(
            budget_characters
        )
        self._inputs: _Budgeted[tuple[str, str | None, int], str] = _Budgeted(budget_characters)
        self._counts: _Budgeted[str, int] = _Budgeted(budget_characters)
        # Recalled from memo files, by digest: taken into the maps above when looked up.
        self._recalled_sections: dict[bytes, np.ndarray] = {}
        self._recalled_counts: dict[bytes, int] = {}
        self._recalled_files: set[TokenMemo] = set()
        # What the split holding the cache looked at, while it keeps a memo.
        self._seen: tuple[list[str], list[str]] | None = None
        self._misses = 0

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
            for kept in (self._sections, self._units, self._inputs, self._counts):
                kept.clear()
            self._recalled_sections.clear()
            self._recalled_counts.clear()
            self._recalled_files.clear()
            self._tokenizer = token_spans
        return self

    def recall(self, memo: TokenMemo) -> None:
        """Take in what the memo says of a document's texts (once per memo and process;
        the caller holds the cache, for the tokenizer of `for_tokenizer`)."""
        if memo in self._recalled_files:
            return
        self._recalled_files.add(memo)
        sections, counts = memo.read()
        self._recalled_sections.update(sections)
        self._recalled_counts.update(counts)

    @contextmanager
    def keeping(self, memo: TokenMemo | None, token_spans: Callable[..., Any]) -> Iterator[None]:
        """Around one split of the document of `memo` with `token_spans` (the cache held):
        recall the memo first, and write it again after a split that tokenised much of
        what it looked at."""
        if memo is None:
            yield
            return
        self.for_tokenizer(token_spans)
        self.recall(memo)
        self._seen, self._misses = ([], []), 0
        try:
            yield
            sections, counts = self._seen
            looked_at = len(sections) + len(counts)
            if looked_at and self._misses > MEMO_REWRITE_SHARE * looked_at:
                memo.write(
                    {
                        digest(text): self._sections[text]
                        for text in sections
                        if text in self._sections
                    },
                    {digest(text): self._counts[text] for text in counts if text in self._counts},
                )
        finally:
            self._seen = None

    def spans(self, piece: str, token_spans: Callable[[str], Any]) -> np.ndarray:
        """The (n, 2) spans of `piece`'s tokens, relative to it: cached, or found now."""
        found = self._sections.get(piece)
        if found is None:
            found = (
                self._recalled_sections.pop(digest(piece), None)
                if self._recalled_sections
                else None
            )
            if found is None:
                self.check_way()
                found = np.asarray(token_spans(piece), dtype=np.int64).reshape(-1, 2)
                self.tokenised += 1
                self._misses += 1
            self._sections.put(piece, found, len(piece))
        if self._seen is not None:
            self._seen[0].append(piece)
        return found

    def count(self, text: str, token_spans: Callable[[str], Any]) -> int:
        """How many tokens `text` has: cached, or counted now."""
        found = self._counts.get(text)
        if found is None:
            found = self._recalled_counts.pop(digest(text), None) if self._recalled_counts else None
            if found is None:
                self.check_way()
                found = len(token_spans(text))
                self.counted += 1
                self._misses += 1
            self._counts.put(text, found, len(text))
        if self._seen is not None:
            self._seen[1].append(text)
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
            found = model_input(
                text,
                section,
                token_spans,
                max_tokens,
                trail,
                lambda piece: self.count(piece, token_spans),
            )
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
