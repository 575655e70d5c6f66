"""The vector side of a folder index's snapshot: the FAISS spaces of one generation.

Both snapshots of a folder index, the store's (`LocalSnapshot`) and the light reader's
(`ReaderSnapshot`), search their spaces the same way; each supplies `allowed_chunks`,
the ids a filter allows, from its own database connection. Kept free of FAISS imports:
the light reader imports FAISS only when it loads a space.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

    from indexer.store.base import Ranked
    from indexer.store.filters import SearchFilter
    from indexer.store.local.vectors import VectorSpace


class SpaceReads:
    """Vector search, similarities and sizes over `spaces` (mixed into a snapshot that
    has `allowed_chunks(where)`)."""

    spaces: dict[str, VectorSpace]
    # the snapshot's own (no default here: a mixin's method would shadow it)
    allowed_chunks: Callable[[SearchFilter], np.ndarray]

    def vector_search(
        self, space: str, queries: np.ndarray, k: int, where: SearchFilter | None = None
    ) -> list[Ranked]:
        """The `k` nearest chunks of each query row (among those `where` allows)."""
        allowed = self.allowed_chunks(where) if where else None
        return self.spaces[space].ranked(queries, k, allowed)

    def similarities(self, space: str, query: np.ndarray, chunk_ids: list[int]) -> dict[int, float]:
        """The cosine of one query vector with each of these chunks' vectors in a space."""
        return self.spaces[space].similarities(query, chunk_ids)

    def space_size(self, space: str) -> int:
        """How many vectors a space holds."""
        return len(self.spaces[space])
