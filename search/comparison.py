"""Two modes' results for one query (static vs contextual by default), with rank changes."""

from __future__ import annotations

from typing import Any

from search.engine import Hit, Searcher
from search.modes import Mode


def compare_modes(
    searcher: Searcher,
    query: str,
    k: int = 10,
    mode: str = Mode.CONTEXTUAL,
    against: str = Mode.STATIC,
) -> dict[str, Any]:
    """Both result lists, keyed by mode name; `mode`'s hits say how far they moved.

    A hit of `mode` has `change` `up`, `down`, `same` or `new` (absent from the `against`
    top k), with `moved` places; a hit of `against` has `kept` or `vanished` (absent from
    the `mode` top k). `other_rank` is the document's rank in the other list, or null.
    """
    baseline = searcher.search(query, k=k, mode=against).results
    compared = searcher.search(query, k=k, mode=mode).results
    baseline_ranks = {hit.document_id: hit.rank for hit in baseline}
    compared_ranks = {hit.document_id: hit.rank for hit in compared}
    return {
        "query": query,
        "k": k,
        against: [_baseline_entry(hit, compared_ranks) for hit in baseline],
        mode: [_compared_entry(hit, baseline_ranks) for hit in compared],
    }


def _baseline_entry(hit: Hit, compared_ranks: dict[int, int]) -> dict[str, Any]:
    other = compared_ranks.get(hit.document_id)
    return {**hit.to_dict(), "other_rank": other, "change": "kept" if other else "vanished"}


def _compared_entry(hit: Hit, baseline_ranks: dict[int, int]) -> dict[str, Any]:
    other = baseline_ranks.get(hit.document_id)
    if other is None:
        change, moved = "new", None
    elif other > hit.rank:
        change, moved = "up", other - hit.rank
    elif other < hit.rank:
        change, moved = "down", hit.rank - other
    else:
        change, moved = "same", 0
    return {**hit.to_dict(), "other_rank": other, "change": change, "moved": moved}


def change_marker(entry: dict[str, Any]) -> str:
    """A short marker for a terminal: ▲2, ▼1, =, new, or gone."""
    return {
        "up": f"▲{entry.get('moved')}",
        "down": f"▼{entry.get('moved')}",
        "same": "=",
        "new": "new",
        "kept": "",
        "vanished": "gone",
    }[entry["change"]]
