"""Why a hit is where it is (`explain`): per hit, what each side of the search saw.

An explanation (`Hit.explain`, JSON) holds:

- `sides`: for each side the mode searched (contextual, static, lexical), the hit's rank
  in that side's list (None when the list missed it) and its score there (a cosine, or
  BM25; for a passage a side missed, its exact score looked up for the fusion, if any);
- `fusion` (hybrid only): the dense side's weight, the rule that chose it and why
  (`search.fusion_reasons`), and the hit's two terms of its fused passage score;
- `terms`: each query term (as the lexical index tokenizes and stems it), whether the
  passage holds it, how many passages do (`passages`) and its IDF in the index;
- `words`: the passage's words that carried its cosine to the query, in the contextual
  and the static space side by side (`search.passage_words`), so that what context
  changed shows; absent in lexical mode, whose ranking no vector took part in;
- `notes`: what could not be explained, and why.

Explaining costs nothing for the first four (the search read them already); the words
are a forward pass of the model over the hits' passages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from indexer.spaces import Space
from indexer.store.base import StoredChunk, TermEvidence
from search.fusion import HybridFusion, hybrid_fusion
from search.fusion_reasons import FusionReason, fusion_reason, side_values
from search.match import idf
from search.modes import Mode

Ranked = list[tuple[int, float]]
# A passage's words by space (`search.passage_words.PassageWords.explain`).
WordsOf = Callable[[StoredChunk], dict[str, Any]]


@dataclass
class SideLists:
    """What a search's sides found, kept for explaining it: each side's list and the
    exact scores looked up for the fusion (`cosines`, `bm25`) of candidates a list missed."""

    lists: dict[str, Ranked] = field(default_factory=dict)
    cosines: Mapping[int, float] = field(default_factory=dict)
    bm25: Mapping[int, float] = field(default_factory=dict)
    fused: dict[int, float] = field(default_factory=dict)  # hybrid: each passage's fused score


@dataclass
class Explainer:
    """Explains the hits of one search; `words` is None where no vector ranked them."""

    request_mode: Mode
    query: str
    dense_weight: float | None
    hybrid: HybridFusion
    words: WordsOf | None
    notes: list[str] = field(default_factory=list)

    def explain(
        self,
        chunks: list[StoredChunk],
        found: SideLists,
        evidence: TermEvidence,
        terms: list[str],
    ) -> list[dict[str, Any]]:
        """One explanation per chunk, in order."""
        fusion = None
        if self.request_mode is Mode.HYBRID and self.hybrid.fuse is hybrid_fusion:
            fusion = self._fusion(found)
        explained = []
        for chunk in chunks:
            shown: dict[str, Any] = {"sides": _sides(chunk.id, found, self.request_mode)}
            if fusion is not None:
                shown["fusion"] = fusion(chunk.id)
            shown["terms"] = _terms(chunk.id, evidence, terms)
            shown["index_passages"] = evidence.chunks
            notes = list(self.notes)
            if self.words is not None:
                shown["words"] = self.words(chunk)
            else:
                notes.append(
                    "lexical mode: ranked by the query's words alone, no vector space took "
                    "part (the hit's similarity is shown for its match label only)"
                )
            shown["notes"] = notes
            explained.append(shown)
        return explained

    def _fusion(self, found: SideLists) -> Callable[[int], dict[str, Any]]:
        dense = found.lists.get(Space.CONTEXTUAL.value, [])
        lexical = found.lists.get(Space.LEXICAL.value, [])
        reason: FusionReason = fusion_reason(dense, lexical, self.dense_weight, self.query)
        completes = self.hybrid.completes
        on_dense, on_lexical = side_values(
            dense, lexical, found.cosines if completes else {}, found.bm25 if completes else {}
        )
        weight = reason.dense_weight

        def of(chunk_id: int) -> dict[str, Any]:
            dense_part = weight * on_dense.get(chunk_id, 0.0)
            lexical_part = (1.0 - weight) * on_lexical.get(chunk_id, 0.0)
            return {
                "dense_weight": round(weight, 6),
                "lexical_weight": round(1.0 - weight, 6),
                "rule": reason.rule,
                "why": reason.why,
                "evidence": reason.evidence,
                "dense_part": round(dense_part, 6),
                "lexical_part": round(lexical_part, 6),
                "fused": round(found.fused.get(chunk_id, dense_part + lexical_part), 6),
            }

        return of


def _sides(chunk_id: int, found: SideLists, mode: Mode) -> dict[str, dict[str, Any]]:
    """The hit's rank and score on each side the mode searched."""
    sides = {}
    for space in mode.spaces:
        ranked = found.lists.get(space.value, [])
        rank = next((n for n, (item, _) in enumerate(ranked, start=1) if item == chunk_id), None)
        looked_up = found.bm25 if space is Space.LEXICAL else found.cosines
        if rank is not None:
            score: float | None = ranked[rank - 1][1]
        else:
            score = looked_up.get(chunk_id)
        sides[space.value] = {
            "rank": rank,
            "score": None if score is None else round(score, 6),
            "listed": len(ranked),
        }
    return sides


def _terms(chunk_id: int, evidence: TermEvidence, terms: list[str]) -> list[dict[str, Any]]:
    """Each query term: in the passage or not, how many passages hold it, its IDF."""
    shown = []
    for term in evidence.counts:
        held = evidence.counts[term]
        shown.append(
            {
                "term": term,
                "in_passage": chunk_id in evidence.holders.get(term, set()),
                "passages": held,
                "idf": round(idf(evidence.chunks, held), 4),
            }
        )
    return shown if terms else []
