"""The places of a search's hits: best first, what would crowd them held below the first few.

A query's or a `similar` search's candidates are offered here best first, after the
search has dropped what it never shows (the item itself, copies, hits below
`min_similarity`). Each is placed in turn, except a passage that would crowd the first
places, which waits until `HELD_BELOW` other hits are placed and then takes the next
places in its order (when fewer other hits exist, it comes after them):

- navigation, a table of contents, an index or a sitemap (`search.navigation`): it names
  what the pages it lists hold, so it resembles every question about them, but a reader
  wants those pages;
- a passage of a file that swamps the search, holding a large share of the passages
  searched (`search.large_documents`): one of its thousands of passages is near almost
  any query by chance. Not so a passage holding exactly what the user typed, a rare
  word or phrase (`search.exact_evidence`): a word just added to a big changelog is
  found there first.

With one hit per document, a document whose best passage is held is shown by its best
other passage if it has one that can be placed (a page with a short list among its
prose is still a page), and by its held passage otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from indexer.store.base import StoredChunk
from search.navigation import is_navigation

# What would crowd the first places never takes one of this many while another hit can.
HELD_BELOW = 3

Placed = tuple[StoredChunk, float]


def crowding(
    swamping: Collection[int], exact: Collection[int] = frozenset()
) -> Callable[[StoredChunk], bool]:
    """Whether a stored passage would crowd the first places of a search in which the
    files `swamping` (document ids) swamp: navigation, or a passage of one of them that
    is not among the passages `exact` (chunk ids) holding what the user typed
    (`search.exact_evidence`), which no chance brought near."""

    def crowds(chunk: StoredChunk) -> bool:
        if chunk.document_id in swamping and chunk.id not in exact:
            return True
        return is_navigation(chunk.text, chunk.path)

    return crowds


class Places:
    """Up to `k` hits in their places, one per document unless `every_passage`;
    `held_back` tells a passage that would crowd the first places (`crowding`)."""

    def __init__(
        self,
        k: int,
        held_back: Callable[[StoredChunk], bool],
        every_passage: bool = False,
    ):
        self.k = k
        self.every_passage = every_passage
        self.held_back = held_back
        self._placed: list[Placed] = []
        self._held: list[Placed] = []
        self._others = 0  # hits placed that were not held back
        self._documents: set[int] = set()  # the documents placed (one hit per document)

    @property
    def full(self) -> bool:
        """Whether `k` hits are placed (the held ones are placed once enough others are)."""
        return len(self._placed) >= self.k

    def shown(self, document_id: int) -> bool:
        """Whether a hit of this document is placed, so that one per document is done."""
        return not self.every_passage and document_id in self._documents

    def offer(self, chunk: StoredChunk, score: float) -> None:
        """Place the next best candidate, or hold it back (see the module)."""
        if self.shown(chunk.document_id):
            return
        if self._others < HELD_BELOW and self.held_back(chunk):
            if self.every_passage or all(
                held.document_id != chunk.document_id for held, _ in self._held
            ):
                self._held.append((chunk, score))
            return
        self._place(chunk, score)
        self._others += 1
        if not self.every_passage:  # the document is shown: its held passage is not
            document = chunk.document_id
            self._held = [pair for pair in self._held if pair[0].document_id != document]
        if self._others == HELD_BELOW:
            for held, held_score in self._held:
                self._place(held, held_score)
            self._held = []

    def hits(self) -> list[Placed]:
        """The hits in their places: those placed, then those still held, `k` at most."""
        return (self._placed + self._held)[: self.k]

    def _place(self, chunk: StoredChunk, score: float) -> None:
        self._placed.append((chunk, score))
        self._documents.add(chunk.document_id)
