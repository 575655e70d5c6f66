"""A document's score from its passages: its best passage's, plus a little of the next ones.

Passages anchored to a document's structure are smaller than windows from its start, and a
page that answers a question in several of its sections ranked no better than a page with
one passage that happens to share the question's words. So a document, shown as its best
passage, is scored as that passage's score plus `support` times its second-best passage's
and `support` squared times its third's, with `support` per mode (`SUPPORT`). Measured
through the real index (docs/reports/2026-12-01-quality-26.md), chosen on the same sets:
the contextual cosine takes little (SciFact's abstracts of one to three passages lose
0.02 nDCG@10 at 0.2), the hybrid z-score more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from search.modes import Mode

# The weight of a document's second-best passage, by mode (its third gets the square).
SUPPORT = {Mode.HYBRID: 0.2, Mode.CONTEXTUAL: 0.05, Mode.LEXICAL: 0.1, Mode.STATIC: 0.0}
# How many passages after the best one count.
SUPPORTING = 2
# How many passages deep (at least) a search for one hit per document looks, so that a
# document's supporting passages are seen however few hits are asked for.
DOCUMENT_DEPTH = 200


def document_ranked(
    ranked: Sequence[tuple[int, float]], documents: Mapping[int, int], support: float
) -> list[tuple[int, float]]:
    """`ranked` (chunk id, score), best first, with each document's best chunk scored as
    its document (see the module) and the others as they were, best first (ties in their
    order in `ranked`). `documents` maps chunk ids to documents (a chunk not in it is left
    as it is)."""
    if not support:
        return list(ranked)
    best: dict[int, int] = {}  # document -> the index in `ranked` of its best chunk
    added: dict[int, float] = {}
    counted: dict[int, int] = {}
    for index, (chunk_id, score) in enumerate(ranked):
        document = documents.get(chunk_id)
        if document is None:
            continue
        if document not in best:
            best[document], added[document], counted[document] = index, 0.0, 0
        elif counted[document] < SUPPORTING:
            counted[document] += 1
            added[document] += support ** counted[document] * score
    rescored = list(ranked)
    for document, index in best.items():
        chunk_id, score = ranked[index]
        rescored[index] = (chunk_id, score + added[document])
    order = sorted(range(len(rescored)), key=lambda index: (-rescored[index][1], index))
    return [rescored[index] for index in order]
