"""What hybrid fusion looks up before it fuses, over the lab's cached corpora: each side's
exact score of the candidates only the other side found (their cosines; the BM25 of those
holding a query term), so that `search.fusion` need not give them that list's lowest
score. An index's snapshot looks them up with its own search (`CandidateSearch`)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from indexer.spaces import Space

Ranked = list[tuple[int, float]]


class ScoreLookup(Protocol):
    """Where exact scores come from: the lab's corpus cache."""

    def similarities(self, space: str, query: np.ndarray, chunk_ids: list[int]) -> dict[int, float]:
        """The cosine of the query vector with each of these chunks in a vector space."""
        ...

    def lexical_scores(self, query: str, chunk_ids: list[int]) -> dict[int, float]:
        """The full-text score of each of these chunks that holds a query term."""
        ...


def exact_scores(
    lookup: ScoreLookup,
    query: str,
    vector: np.ndarray,
    dense: Ranked,
    lexical: Ranked,
    depth: int,
) -> tuple[dict[int, float], dict[int, float]]:
    """(cosines of the chunks only the lexical list holds, BM25 of the chunks only the
    dense list holds). A lexical list shorter than `depth` already holds every chunk with
    a query term, so it is not asked again."""
    in_dense = {chunk_id for chunk_id, _ in dense}
    in_lexical = {chunk_id for chunk_id, _ in lexical}
    only_lexical = [chunk_id for chunk_id, _ in lexical if chunk_id not in in_dense]
    only_dense = [chunk_id for chunk_id, _ in dense if chunk_id not in in_lexical]
    cosines = (
        lookup.similarities(Space.CONTEXTUAL.value, vector, only_lexical) if only_lexical else {}
    )
    bm25 = lookup.lexical_scores(query, only_dense) if only_dense and len(lexical) >= depth else {}
    return cosines, bm25
