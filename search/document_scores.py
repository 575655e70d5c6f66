"""A document's score from its passages: its best passage's, plus a little of its others.

Passages anchored to a document's structure are smaller than windows from its start, and a
page that answers a question in several of its sections ranked no better than a page with
one passage that happens to share the question's words. So a document, shown as its best
passage, is scored as that passage's score plus `support` times the score of its best
passage in another section and `support` squared times that of its best in a third
section, with `support` per mode (`SUPPORT`).

In the dense modes, passages of the same section (a long section's windows) and passages
of no section (plain text, one abstract in two windows) are no further evidence: an
unstructured text is scored by its best passage alone, so a collection of abstracts ranks
as it did. In lexical mode every other passage counts (`EVERY_PASSAGE`): a BM25 score
weighs the query's words found in one passage, and a small text cut in two windows holds
half of them in each. Measured through the real index (docs/reports/2026-12-01-quality-26.md),
chosen on the same sets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from search.modes import Mode

# The weight of a document's best passage in a second section, by mode (a third: squared).
SUPPORT = {Mode.HYBRID: 0.15, Mode.CONTEXTUAL: 0.05, Mode.LEXICAL: 0.1, Mode.STATIC: 0.0}
# The modes in which any other passage of the document supports it, not only other sections.
EVERY_PASSAGE = frozenset({Mode.LEXICAL})
# How many sections after the best passage's count.
SUPPORTING = 2
# How many passages deep (at least) a search for one hit per document looks, so that a
# document's supporting passages are seen however few hits are asked for.
DOCUMENT_DEPTH = 200


def mode_ranked(
    ranked: Sequence[tuple[int, float]],
    documents: Mapping[int, tuple[int, str | None]],
    mode: Mode,
) -> list[tuple[int, float]]:
    """`document_ranked` with `mode`'s support, and its passages that count."""
    return document_ranked(ranked, documents, SUPPORT[mode], mode in EVERY_PASSAGE)


def document_ranked(
    ranked: Sequence[tuple[int, float]],
    documents: Mapping[int, tuple[int, str | None]],
    support: float,
    every_passage: bool = False,
) -> list[tuple[int, float]]:
    """`ranked` (chunk id, score), best first, with each document's best chunk scored as
    its document (see the module) and the others as they were, best first (ties in their
    order in `ranked`). `documents` maps chunk ids to their document and section trail (a
    chunk not in it is left as it is). With `every_passage`, each chunk counts as a
    section of its own."""
    if not support:
        return list(ranked)
    best: dict[int, int] = {}  # document -> the index in `ranked` of its best chunk
    added: dict[int, float] = {}
    sections: dict[int, set[object]] = {}  # the sections counted, the best's first
    for index, (chunk_id, score) in enumerate(ranked):
        if chunk_id not in documents:
            continue
        document, trail = documents[chunk_id]
        section: object = chunk_id if every_passage else trail
        if document not in best:
            best[document], added[document], sections[document] = index, 0.0, {section}
        elif section not in (None, "") and section not in sections[document]:
            counted = len(sections[document])
            if counted <= SUPPORTING:
                added[document] += support**counted * score
                sections[document].add(section)
    rescored = list(ranked)
    for document, index in best.items():
        chunk_id, score = ranked[index]
        rescored[index] = (chunk_id, score + added[document])
    order = sorted(range(len(rescored)), key=lambda index: (-rescored[index][1], index))
    return [rescored[index] for index in order]
