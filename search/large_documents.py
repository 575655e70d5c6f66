"""Whether a document swamps a search: it holds a large share of the passages searched.

A document of thousands of passages has, by chance alone, one near almost any query, in
words and in meaning: a 693k-character changelog, 44% of a documentation index, was a
top hit of questions only the pages it mentions answer. Such a document is held below
the first places as navigation is (`search.placing`): it still comes back, after them,
and a search limited to it (`--path`) finds it first.

A document swamps a search when it holds at least `LARGE_SHARE` of the passages the
search may return (the index's, or those its filters allow) and at least
`LARGE_PASSAGES` of them: in a small index every document is a large share, but none has
passages enough to match everything. Records are never counted as swamping.
"""

from __future__ import annotations

from indexer.store.base import Snapshot, StoredChunk
from indexer.store.filters import SearchFilter

# A document swamps a search from this share of the passages searched ...
LARGE_SHARE = 0.25
# ... when it holds at least this many passages.
LARGE_PASSAGES = 500


class LargeDocuments:
    """Tells, for the passages a search places, whether their document swamps it; each
    document is counted once, and only when the passages searched are enough for one
    to swamp."""

    def __init__(self, snapshot: Snapshot, where: SearchFilter | None):
        self.snapshot = snapshot
        self.where = where or None
        self._searched: int | None = None
        self._swamping: dict[int, bool] = {}  # by document id

    def swamps(self, chunk: StoredChunk) -> bool:
        """Whether the document of `chunk` swamps the search (see the module)."""
        if chunk.metadata_json is not None:  # a record
            return False
        if self._searched is None:
            self._searched = self.snapshot.chunk_count(self.where)
        if self._searched < LARGE_PASSAGES:
            return False
        if chunk.document_id not in self._swamping:
            passages = self.snapshot.chunk_count(SearchFilter(under=(chunk.path,)))
            self._swamping[chunk.document_id] = (
                passages >= LARGE_PASSAGES and passages >= LARGE_SHARE * self._searched
            )
        return self._swamping[chunk.document_id]
