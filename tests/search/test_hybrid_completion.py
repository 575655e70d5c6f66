"""Hybrid search looks up each candidate's missing score before fusing (search.engine)."""

from dataclasses import replace

import numpy as np
import pytest

from search.engine import Searcher
from search.fusion import hybrid_fusion

QUERY = "how do central banks set interest rates"
DEPTH = 6


@pytest.fixture(scope="module")
def shallow(sample_index):
    """A Searcher on the sample index whose hybrid mode reads only DEPTH per side, so the
    two lists differ and each side has candidates only the other found."""
    with Searcher(sample_index) as searcher:
        searcher.hybrid = replace(searcher.hybrid, depth=DEPTH)
        yield searcher


def exact_scores(snapshot, vector: np.ndarray, dense, lexical):
    """The cosines of the chunks only the lexical list holds (their stored vectors with
    the query's) and the BM25 of those only the dense list holds that have a query term
    (what a search deep enough to list them all scores them)."""
    only_lexical = [c for c, _ in lexical if c not in dict(dense)]
    only_dense = [c for c, _ in dense if c not in dict(lexical)]
    stored = snapshot.vectors("contextual", only_lexical)
    cosines = {chunk_id: float(stored[chunk_id] @ vector) for chunk_id in only_lexical}
    every = dict(snapshot.lexical_search(QUERY, 1000))
    bm25 = {chunk_id: every[chunk_id] for chunk_id in only_dense if chunk_id in every}
    return cosines, bm25


def test_hybrid_fuses_the_lists_completed_by_exact_scores(shallow):
    vector = shallow.encoders()["contextual"].encode([QUERY])
    with shallow.store.snapshot() as snapshot:
        dense = snapshot.vector_search("contextual", vector, DEPTH)[0]
        lexical = snapshot.lexical_search(QUERY, DEPTH)
        cosines, bm25 = exact_scores(snapshot, vector[0], dense, lexical)
    assert cosines and bm25  # the query exercises both look-ups
    expected = hybrid_fusion(dense, lexical, None, cosines, bm25, QUERY)
    # completion changes this ranking
    assert expected != hybrid_fusion(dense, lexical, None, None, None, QUERY)

    hits = shallow.search(QUERY, k=5, all_chunks=True).results
    assert [(h.chunk_id, h.score) for h in hits] == [
        (chunk_id, pytest.approx(score, abs=1e-6)) for chunk_id, score in expected[:5]
    ]
    for hit in hits:  # a chunk the dense side missed still shows its cosine
        if hit.chunk_id in cosines:
            assert hit.similarity == pytest.approx(cosines[hit.chunk_id], abs=1e-6)


def test_a_fixed_dense_weight_is_completed_too(shallow):
    vector = shallow.encoders()["contextual"].encode([QUERY])
    with shallow.store.snapshot() as snapshot:
        dense = snapshot.vector_search("contextual", vector, DEPTH)[0]
        lexical = snapshot.lexical_search(QUERY, DEPTH)
        cosines, bm25 = exact_scores(snapshot, vector[0], dense, lexical)
    expected = hybrid_fusion(dense, lexical, 0.3, cosines, bm25)
    hits = shallow.search(QUERY, k=3, all_chunks=True, dense_weight=0.3).results
    assert [h.chunk_id for h in hits] == [chunk_id for chunk_id, _ in expected[:3]]
