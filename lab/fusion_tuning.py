"""Choose hybrid fusion across collections: every variant on every collection, and
leave-one-collection-out (LOCO) figures for the way the default is chosen.

A *collection* is a dataset folder; its splits are measured separately but left out
together (SciFact train and test share a corpus; the sample corpus's keyword and question
sets too). Splits marked `eval_only` (SciFact test) are reported and never tuned on.

The selection rule, fixed before any figure was seen: over the tuning splits, each
variant's *margin* on a split is its nDCG@10 minus the better of contextual and lexical
alone on that split; a variant's objective is the mean margin plus the worst margin
(gain on average, and never losing to its own parts). Ties go to the earlier variant.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lab.fusion_variants import dbsf_fusion, linear_fusion, weighted_rrf
from lab.splits import DEPTHS, MAX_DEPTH, Split
from search.fusion import (
    COSINE_HIGH,
    COSINE_LOW,
    FUSION_DEPTH,
    QUESTION_SHARE,
    Fused,
    Ranked,
    adaptive_fusion,
    peak,
    z_scores,
    zscore_fusion,
)
from search.fusion import SHARPNESS as SHARPNESS_DEFAULT
from search.modes import Mode
from search.questions import is_question

WEIGHTS = tuple(round(0.1 * step, 1) for step in range(11))
RRF_KS = (1, 2, 5, 10, 20, 30, 60, 100, 200)
SHARPNESS = (0.5, 1.0, 2.0)
# (low, high) dense cosine bands for the adaptive weight; None: peaks only.
COSINE_BANDS: tuple[tuple[float, float] | None, ...] = (
    None,
    (0.6, 0.9),
    (0.6, 1.0),
    (0.7, 0.85),
    (0.7, 0.9),
    (0.75, 0.95),
)
PRIORS = (0.4, 0.6)
# How far a question moves the dense share towards 1 (0: the query's form not used).
QUESTION_SHARES = (0.0, 0.3, 0.5, 0.7, 0.9)
OLD_HYBRID = "minmax w=0.4 d=100"

# A fusion of a dense and a lexical list; the completed families also take each side's
# exact scores of the other side's candidates.
Fuse = Callable[..., Fused]


@dataclass(frozen=True)
class Variant:
    """One fusion setting: a family, its parameters, and how deep each side is read."""

    name: str
    family: str
    fuse: Fuse = field(compare=False, hash=False)
    depth: int = 100
    params: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    completes: bool = False  # takes each side's exact scores of the other's candidates


def variants(depths: Sequence[int] = DEPTHS) -> list[Variant]:
    """Every fusion setting tried, at every depth.

    Families: min-max, z-score and DBSF linear fusion at dense weights 0 to 1; RRF for
    several k; `adaptive` (search.fusion.adaptive_fusion: peaks, and a dense cosine
    band); and three lab-only adaptive alternatives that lost (kept to be reproducible):
    `adaptive-outlier` (the peak measured against the rest of the list without the top
    entry), `adaptive-prior` (a fixed prior for the dense side times its peak) and
    `zscore-padded` (the lexical list padded with zero scores to the depth before
    standardising, as if every unmatched document scored 0). The `+exact` families are
    z-score and adaptive fusion *completed*: each candidate missing from one list takes
    its exact score on that side (see `search.fusion.weighted_fusion`).
    """
    found: list[Variant] = []
    for depth in depths:
        for weight in WEIGHTS:
            found.append(
                Variant(
                    f"zscore+exact w={weight} d={depth}",
                    "zscore+exact",
                    _weighted(zscore_fusion, weight),
                    depth,
                    {"dense_weight": weight},
                    completes=True,
                )
            )
        for sharpness in SHARPNESS:
            for band in COSINE_BANDS:
                for question in QUESTION_SHARES:
                    label = "" if band is None else f" cos={band[0]}-{band[1]}"
                    label += f" q={question}" if question else ""
                    found.append(
                        Variant(
                            f"adaptive+exact s={sharpness}{label} d={depth}",
                            "adaptive+exact",
                            _adaptive(sharpness, band, question),
                            depth,
                            {"sharpness": sharpness, "cosine_band": band, "question": question},
                            completes=True,
                        )
                    )
        for weight in WEIGHTS:
            for family, function in (
                ("minmax", linear_fusion),
                ("zscore", zscore_fusion),
                ("dbsf", dbsf_fusion),
            ):
                found.append(
                    Variant(
                        f"{family} w={weight} d={depth}",
                        family,
                        _weighted(function, weight),
                        depth,
                        {"dense_weight": weight},
                    )
                )
        for k in RRF_KS:
            found.append(Variant(f"rrf k={k} d={depth}", "rrf", _rrf(k), depth, {"k": k}))
        for sharpness in SHARPNESS:
            for band in COSINE_BANDS:
                label = "" if band is None else f" cos={band[0]}-{band[1]}"
                found.append(
                    Variant(
                        f"adaptive s={sharpness}{label} d={depth}",
                        "adaptive",
                        _adaptive(sharpness, band),
                        depth,
                        {"sharpness": sharpness, "cosine_band": band},
                    )
                )
        for sharpness in SHARPNESS:
            for band in (None, (0.6, 0.9)):
                label = "" if band is None else f" cos={band[0]}-{band[1]}"
                found.append(
                    Variant(
                        f"adaptive-outlier s={sharpness}{label} d={depth}",
                        "adaptive-outlier",
                        _lab_adaptive(_outlier_peak, sharpness, 0.5, band),
                        depth,
                        {"sharpness": sharpness, "cosine_band": band},
                    )
                )
            for prior in PRIORS:
                found.append(
                    Variant(
                        f"adaptive-prior s={sharpness} b={prior} d={depth}",
                        "adaptive-prior",
                        _lab_adaptive(peak, sharpness, prior, None),
                        depth,
                        {"sharpness": sharpness, "prior": prior},
                    )
                )
        for weight in WEIGHTS:
            found.append(
                Variant(
                    f"zscore-padded w={weight} d={depth}",
                    "zscore-padded",
                    _padded(weight, depth),
                    depth,
                    {"dense_weight": weight},
                )
            )
    return found


def default_variant() -> Variant:
    """The swept variant that is `hybrid` search's fusion (`search.fusion.HYBRID`)."""
    wanted = {
        "sharpness": SHARPNESS_DEFAULT,
        "cosine_band": (COSINE_LOW, COSINE_HIGH),
        "question": QUESTION_SHARE,
    }
    return next(
        variant
        for variant in variants([FUSION_DEPTH])
        if variant.family == "adaptive+exact" and variant.params == wanted
    )


def _weighted(function: Callable[..., Fused], weight: float) -> Fuse:
    return lambda dense, lexical, *exact: function(dense, lexical, weight, *exact[:2])


def _rrf(k: float) -> Fuse:
    return lambda dense, lexical: weighted_rrf(dense, lexical, 0.5, k)


def _adaptive(sharpness: float, band: tuple[float, float] | None, question: float = 0.0) -> Fuse:
    low, high = band if band is not None else (None, None)

    def fuse(dense: Ranked, lexical: Ranked, cosines=None, bm25=None, query: str = "") -> Fused:
        return adaptive_fusion(
            dense, lexical, None, sharpness, low, high, cosines, bm25, is_question(query), question
        )

    return fuse


def _outlier_peak(ranked: Ranked) -> float:
    """The top score's z-score against the rest of the list (without the top entry)."""
    if len(ranked) < 3:
        return 0.0
    rest = [score for _, score in ranked[1:]]
    mean = statistics.fmean(rest)
    deviation = statistics.pstdev(rest)
    return 0.0 if deviation == 0 else (ranked[0][1] - mean) / deviation


def _lab_adaptive(
    peak_of: Callable[[Ranked], float],
    sharpness: float,
    prior: float,
    band: tuple[float, float] | None,
) -> Fuse:
    def fuse(dense: Ranked, lexical: Ranked) -> Fused:
        dense_peak = prior * max(peak_of(dense), 0.0) ** sharpness
        lexical_peak = (1 - prior) * max(peak_of(lexical), 0.0) ** sharpness
        total = dense_peak + lexical_peak
        weight = 0.5 if total == 0 else dense_peak / total
        if band is not None and dense:
            closeness = (dense[0][1] - band[0]) / (band[1] - band[0])
            weight += (1 - weight) * min(1.0, max(0.0, closeness))
        return zscore_fusion(dense, lexical, weight)

    return fuse


def _padded(weight: float, depth: int) -> Fuse:
    def fuse(dense: Ranked, lexical: Ranked) -> Fused:
        scores = [score for _, score in lexical] + [0.0] * max(0, depth - len(lexical))
        if not lexical or statistics.pstdev(scores) == 0:
            return zscore_fusion(dense, lexical, weight)
        mean, deviation = statistics.fmean(scores), statistics.pstdev(scores)
        standardised = [(item, (score - mean) / deviation) for item, score in lexical]
        floor = (min(scores) - mean) / deviation
        return _fuse_standardised(z_scores(dense), standardised, floor, weight)

    return fuse


def _fuse_standardised(dense_z, lexical_z, lexical_floor: float, weight: float) -> Fused:
    dense_scores, lexical_scores = dict(dense_z), dict(lexical_z)
    dense_floor = min(dense_scores.values()) if dense_scores else 0.0
    fused = {
        item: weight * dense_scores.get(item, dense_floor)
        + (1 - weight) * lexical_scores.get(item, lexical_floor)
        for item in dense_scores.keys() | lexical_scores.keys()
    }
    return sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))


def load_split(
    dataset_dir: Path,
    split: str,
    eval_only: bool = False,
    work_dir: Path | None = None,
    loaded: Any = None,
) -> Split:
    """Both sides' lists (MAX_DEPTH deep) for a split: a BEIR folder from the lab's corpus
    cache (one row per document, as MTEB encodes them), a document folder through an
    index of it (one row per chunk, as search reads it; `lab.index_splits`)."""
    from indexer.encoders.loading import load_model
    from lab.evaluation import Retrieval
    from search.judged.collection import is_beir_folder, load_retrieval_dataset

    if not is_beir_folder(dataset_dir):
        from lab.index_splits import load_index_split

        model = loaded.name if loaded is not None else None
        return load_index_split(dataset_dir, split, eval_only, work_dir, model)
    dataset = load_retrieval_dataset(dataset_dir, split)
    retrieval = Retrieval(dataset, loaded or load_model(), work_dir)
    lists = retrieval.ranked_lists(["contextual", "lexical"], depth=MAX_DEPTH)
    exact = retrieval.exact_scores(lists["contextual"], lists["lexical"], MAX_DEPTH)
    return Split(
        dataset.name,
        split,
        eval_only,
        lists["contextual"],
        lists["lexical"],
        retrieval.cache.doc_ids,
        dataset.qrels,
        {query: cosines for query, (cosines, _) in exact.items()},
        {query: bm25 for query, (_, bm25) in exact.items()},
        dict(dataset.queries),
    )


def measure(split: Split, variant: Variant) -> dict[str, float]:
    """nDCG@10 and Recall@100 of a variant on a split."""
    depth = variant.depth
    fused = {
        query: variant.fuse(
            split.dense[query][:depth],
            split.lexical[query][:depth],
            *((*split.exact(query), split.texts.get(query, "")) if variant.completes else ()),
        )
        for query in split.dense
    }
    return split.score(fused, Mode.HYBRID)


def sweep(splits: Sequence[Split], tried: Sequence[Variant]) -> dict[str, Any]:
    """Every variant on every split, the parts alone, and the LOCO folds."""
    parts = {
        split.label: {
            "contextual": split.score(split.dense, Mode.CONTEXTUAL),
            "lexical": split.score(split.lexical, Mode.LEXICAL),
        }
        for split in splits
    }
    figures = {
        variant.name: {split.label: measure(split, variant) for split in splits}
        for variant in tried
    }
    best_part = {
        label: max(values["contextual"]["ndcg@10"], values["lexical"]["ndcg@10"])
        for label, values in parts.items()
    }
    tunable = [split.label for split in splits if not split.eval_only]
    collections = list(dict.fromkeys(split.collection for split in splits))
    folds = []
    for held_out in collections:
        training = [label for label in tunable if not label.startswith(f"{held_out}:")]
        if not training:
            continue
        chosen = choose(figures, best_part, training, tried)
        held = [split.label for split in splits if split.collection == held_out]
        folds.append(
            {
                "held_out": held_out,
                "tuned_on": training,
                "chosen": chosen,
                "held_out_figures": {
                    label: {
                        **figures[chosen][label],
                        "margin": round(figures[chosen][label]["ndcg@10"] - best_part[label], 4),
                    }
                    for label in held
                },
            }
        )
    overall = choose(figures, best_part, tunable, tried)
    families = {}
    for family in dict.fromkeys(variant.family for variant in tried):
        members = [variant for variant in tried if variant.family == family]
        loco = []
        for held_out in collections:
            training = [label for label in tunable if not label.startswith(f"{held_out}:")]
            if training:
                loco.append(
                    _fold_margins(
                        held_out,
                        choose(figures, best_part, training, members),
                        [s.label for s in splits if s.collection == held_out],
                        figures,
                        best_part,
                    )
                )
        families[family] = {
            "chosen_on_all": choose(figures, best_part, tunable, members),
            "loco": loco,
        }
    return {
        "splits": [split.label for split in splits],
        "tuned_on": tunable,
        "parts": parts,
        "best_part": best_part,
        "variants": figures,
        "objective": {
            variant.name: round(objective(figures[variant.name], best_part, tunable), 4)
            for variant in tried
        },
        "folds": folds,
        "families": families,
        "chosen": overall,
    }


def objective(figures: dict[str, dict[str, float]], best_part: dict[str, float], labels) -> float:
    """Mean margin over the better part plus the worst margin, over `labels`."""
    margins = [figures[label]["ndcg@10"] - best_part[label] for label in labels]
    return statistics.fmean(margins) + min(margins)


def choose(figures, best_part, labels, tried: Sequence[Variant]) -> str:
    """The variant with the highest `objective` over `labels` (the first of equals)."""
    best_name, best_value = tried[0].name, float("-inf")
    for variant in tried:
        value = objective(figures[variant.name], best_part, labels)
        if value > best_value + 1e-12:
            best_name, best_value = variant.name, value
    return best_name


def _fold_margins(held_out, chosen, labels, figures, best_part) -> dict[str, Any]:
    return {
        "held_out": held_out,
        "chosen": chosen,
        **{
            label: round(figures[chosen][label]["ndcg@10"] - best_part[label], 4)
            for label in labels
        },
    }
