"""RM3-style pseudo-relevance feedback for the lexical side: measured, and not adopted.

FTS5's bm25() cannot weight query terms, so the expanded query is approximated: the
expansion terms (the relevance model of the first `feedback_docs` hits, original query
stems left out) are searched on their own, and that list's min-max scores are mixed
with the first list's, `original_weight` to the first. On SciFact, LISA and STS-B it
lowered lexical nDCG@10 and the default hybrid's at every setting tried (README).

    python -m lab.lexical_feedback ../shared/eval/scifact:train ../shared/eval/lisa
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

from indexer.store.local.fts import TextCollection
from indexer.terms import query_terms, stop_words
from lab.fusion_variants import min_max
from search.fusion import FUSION_DEPTH, hybrid_fusion

SETTINGS = ((10, 10, 0.7), (10, 10, 0.5), (5, 10, 0.7))  # feedback docs, terms, weight
_WORD = re.compile(r"\w+")


def rm3_search(
    space: TextCollection,
    query: str,
    k: int,
    feedback_docs: int = 10,
    feedback_terms: int = 10,
    original_weight: float = 0.7,
) -> list[tuple[int, float]]:
    """The first BM25 list mixed with the BM25 list of its feedback terms."""
    import snowballstemmer

    stem = snowballstemmer.stemmer("porter").stemWord
    first = space.search(query, k)
    top = first[:feedback_docs]
    if not top:
        return first
    texts = space.texts([item for item, _ in top])
    total = sum(score for _, score in top)
    own = {stem(term) for term in query_terms(query)}
    model: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for item, score in top:
        words = [w.lower() for w in _WORD.findall(texts.get(item, ""))]
        words = [w for w in words if w not in stop_words() and not w.isdigit() and len(w) > 2]
        for word in words:
            surface.setdefault(stem(word), word)
        for term, count in Counter(stem(w) for w in words).items():
            model[term] += score / total * count / len(words)
    expansion = [term for term, _ in model.most_common() if term not in own][:feedback_terms]
    if not expansion:
        return first
    second = space.search(" ".join(surface[term] for term in expansion), k)
    firsts, seconds = dict(min_max(first)), dict(min_max(second))
    mixed = {
        item: original_weight * firsts.get(item, 0.0)
        + (1 - original_weight) * seconds.get(item, 0.0)
        for item in firsts.keys() | seconds.keys()
    }
    return sorted(mixed.items(), key=lambda pair: (-pair[1], pair[0]))[:k]


def main(arguments: list[str]) -> None:
    """Lexical and default-hybrid nDCG@10 without and with feedback, per split."""
    from indexer.encoders.loading import load_model
    from lab.evaluation import Retrieval
    from lab.fusion_tuning import load_split
    from search.judged.collection import load_retrieval_dataset

    loaded = load_model()
    for argument in arguments:
        folder, _, split = argument.partition(":")
        split = split or "test"
        lists = load_split(Path(folder), split, loaded=loaded)
        dataset = load_retrieval_dataset(Path(folder), split)
        space = Retrieval(dataset, loaded).cache.lexical_space()
        base_hybrid = {
            q: hybrid_fusion(lists.dense[q][:FUSION_DEPTH], lists.lexical[q][:FUSION_DEPTH])
            for q in lists.dense
        }
        line = [
            f"{lists.label}: lexical {lists.score(lists.lexical)['ndcg@10']:.4f}, "
            f"hybrid {lists.score(base_hybrid)['ndcg@10']:.4f}"
        ]
        for docs, terms, weight in SETTINGS:
            lexical = {
                q: rm3_search(space, dataset.queries[q], FUSION_DEPTH, docs, terms, weight)
                for q in lists.dense
            }
            fused = {q: hybrid_fusion(lists.dense[q][:FUSION_DEPTH], lexical[q]) for q in lexical}
            line.append(
                f"rm3 {docs}/{terms}/{weight}: lexical {lists.score(lexical)['ndcg@10']:.4f}, "
                f"hybrid {lists.score(fused)['ndcg@10']:.4f}"
            )
        print("; ".join(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
