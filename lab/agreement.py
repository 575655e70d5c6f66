"""Where intrinsic and extrinsic evaluation rank the same methods differently, and by how much.

The seed's warning: a method can score better on word analogies or word-pair similarity
and still classify sentences worse. Given the results of `ctxsearch lab words` and
`ctxsearch lab classify`, each intrinsic measure's ranking of the methods both measured is
compared with their ranking by test accuracy: Spearman's rho over the methods, and every
pair the two rankings put in opposite orders, with both gaps.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from scipy.stats import spearmanr

INTRINSIC_MEASURES = {
    "analogy": "analogy accuracy",
    "wordsim353": "WordSim-353",
    "simlex999": "SimLex-999",
}
EXTRINSIC_MEASURE = "accuracy"


def compare_rankings(words: dict[str, Any], classify: dict[str, Any]) -> dict[str, Any]:
    """Each intrinsic measure against test accuracy, over the methods both results hold."""
    intrinsic, extrinsic = words.get("methods", {}), classify.get("methods", {})
    shared = [m for m in intrinsic if m in extrinsic and _value(extrinsic[m]) is not None]
    measures: dict[str, Any] = {}
    for measure in INTRINSIC_MEASURES:
        scored = [m for m in shared if _value(intrinsic[m], measure) is not None]
        first = {m: float(intrinsic[m][measure]) for m in scored}
        second = {m: float(extrinsic[m][EXTRINSIC_MEASURE]) for m in scored}
        measures[measure] = {
            "methods": len(scored),
            "spearman": (
                round(float(spearmanr(list(first.values()), list(second.values())).statistic), 4)
                if len(scored) > 2
                else None
            ),
            "ranks": {
                m: {"intrinsic": _rank(first)[m], "extrinsic": _rank(second)[m]} for m in scored
            },
            "inversions": _inversions(first, second),
        }
    return {"methods": shared, "extrinsic": EXTRINSIC_MEASURE, "measures": measures}


def _value(values: dict[str, Any], key: str = EXTRINSIC_MEASURE) -> float | None:
    value = values.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _rank(values: dict[str, float]) -> dict[str, int]:
    """1 for the best value; equal values share the better rank."""
    ordered = sorted(values.values(), reverse=True)
    return {name: ordered.index(value) + 1 for name, value in values.items()}


def _inversions(first: dict[str, float], second: dict[str, float]) -> list[dict[str, Any]]:
    """Every pair ordered one way by `first` and the other by `second`, widest gaps first."""
    found = []
    for a, b in combinations(first, 2):
        if (first[a] - first[b]) * (second[a] - second[b]) < 0:
            better, worse = (a, b) if first[a] > first[b] else (b, a)
            found.append(
                {
                    "intrinsic_better": better,
                    "extrinsic_better": worse,
                    "intrinsic_gap": round(first[better] - first[worse], 4),
                    "extrinsic_gap": round(second[worse] - second[better], 4),
                }
            )
    return sorted(found, key=lambda item: -(item["intrinsic_gap"] + item["extrinsic_gap"]))
