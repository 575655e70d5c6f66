"""Which files swamp a search: each holds a large share of the passages searched.

A file of thousands of passages has, by chance alone, one near almost any query, in
words and in meaning: a 693k-character changelog, 44% of a documentation index, was a
top hit of questions only the pages it mentions answer. Such a file is held below the
first places as navigation is (`search.placing`): it still comes back, after them, and
a search limited to it (`--path`) finds it first.

A file swamps a search when it holds at least `LARGE_SHARE` of the passages the search
may return (the index's, or those its filters allow) and at least `LARGE_PASSAGES` of
them: in a small index every file is a large share, but none has passages enough to
match everything. A record never swamps. The store reads both counts with the
candidates (`Candidates.passages`, `Candidates.searched`): no read of their own.
"""

from __future__ import annotations

from indexer.store.base import Candidates

# A file swamps a search from this share of the passages searched ...
LARGE_SHARE = 0.25
# ... when it holds at least this many passages.
LARGE_PASSAGES = 500


def swamping_documents(found: Candidates) -> set[int]:
    """The ids of the candidates' files that swamp the search (see the module)."""
    if found.searched < LARGE_PASSAGES:
        return set()
    least = max(LARGE_PASSAGES, LARGE_SHARE * found.searched)
    return {document for document, held in found.passages.items() if held >= least}
