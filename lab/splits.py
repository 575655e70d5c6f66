"""One judged query set's two ranked lists (dense and lexical), as fusion tuning reads it.

`lab.fusion_tuning` loads a split from a BEIR folder, `lab.index_splits`
from an index of a document folder; both make this.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from search.document_scores import EVERY_PASSAGE, mode_ranked
from search.fusion import Scores
from search.judged.metrics import mean_metrics
from search.modes import Mode

# The fusion depths the lab sweeps; a split's lists go as deep as the deepest.
DEPTHS = (20, 50, 100, 200)
MAX_DEPTH = max(DEPTHS)


@dataclass
class Split:
    """One judged query set over one collection, with both sides' ranked lists of rows."""

    collection: str
    split: str
    eval_only: bool
    dense: dict[str, list[tuple[int, float]]]
    lexical: dict[str, list[tuple[int, float]]]
    # the document of each row (a corpus position, or a chunk id of an index)
    doc_ids: Sequence[str] | Mapping[int, str]
    qrels: dict[str, dict[str, int]]
    # per query, each side's exact scores of the other list's candidates (MAX_DEPTH deep)
    cosines: dict[str, dict[int, float]] = field(default_factory=dict)
    bm25: dict[str, dict[int, float]] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # the query texts
    # the section trail of each row of an index (rows of a BEIR folder have none)
    sections: Mapping[int, str | None] = field(default_factory=dict)
    _known: dict[str, tuple[Scores, Scores]] = field(default_factory=dict, repr=False)

    def exact(self, query: str) -> tuple[Scores, Scores]:
        """Every score known on each side for a query, for a completed fusion at any depth:
        a row a shorter cut leaves out of one list is looked up the way the engine would.
        Made once per query: every completed variant of a sweep asks for it."""
        if query not in self._known:
            self._known[query] = (
                dict(self.dense[query]) | self.cosines.get(query, {}),
                dict(self.lexical[query]) | self.bm25.get(query, {}),
            )
        return self._known[query]

    @property
    def label(self) -> str:
        """`collection:split`."""
        return f"{self.collection}:{self.split}"

    def score(
        self, ranked: dict[str, list[tuple[int, float]]], mode: Mode | None = None
    ) -> dict[str, float]:
        """nDCG@10 and Recall@100 of ranked rows for each query; a document is ranked
        where its first row is (as search shows one hit per document), its rows scored as
        `mode`'s search scores a document from its sections (`search.document_scores`)."""
        if mode is not None and (self.sections or mode in EVERY_PASSAGE):
            ranked = {query: self._as_documents(pairs, mode) for query, pairs in ranked.items()}
        run = {query: self._documents(pairs) for query, pairs in ranked.items()}
        metrics = mean_metrics(run, self.qrels)
        return {"ndcg@10": metrics["ndcg@10"], "recall@100": metrics["recall@100"]}

    def _as_documents(self, pairs: list[tuple[int, float]], mode: Mode) -> list[tuple[int, float]]:
        documents = {row: (self.doc_ids[row], self.sections.get(row)) for row, _ in pairs}
        return mode_ranked(pairs, documents, mode)

    def _documents(self, pairs: list[tuple[int, float]]) -> dict[str, float]:
        """The first 100 documents of ranked rows, scored by rank so the order holds."""
        order: dict[str, float] = {}
        for row, _score in pairs:
            order.setdefault(self.doc_ids[row], float(100 - len(order)))
            if len(order) == 100:
                break
        return order
