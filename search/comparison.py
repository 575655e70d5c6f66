"""Static vs contextual results for one query, with each document's rank change."""

from __future__ import annotations

from typing import Any

from search.engine import Hit, Searcher


def compare_spaces(searcher: Searcher, query: str, k: int = 10) -> dict[str, Any]:
    """Both result lists; contextual hits say how far they moved from their static rank.

    A contextual hit's `change` is `up`, `down`, `same` or `new` (absent from the static
    top k), with `moved` places; a static hit's is `kept` or `vanished` (absent from the
    contextual top k). `other_rank` is the document's rank in the other list, or null.
    """
    static = searcher.search(query, k=k, space="static").results
    contextual = searcher.search(query, k=k, space="contextual").results
    static_ranks = {hit.document_id: hit.rank for hit in static}
    contextual_ranks = {hit.document_id: hit.rank for hit in contextual}
    return {
        "query": query,
        "k": k,
        "static": [_static_entry(hit, contextual_ranks) for hit in static],
        "contextual": [_contextual_entry(hit, static_ranks) for hit in contextual],
    }


def _static_entry(hit: Hit, contextual_ranks: dict[int, int]) -> dict[str, Any]:
    other = contextual_ranks.get(hit.document_id)
    return {**hit.to_dict(), "other_rank": other, "change": "kept" if other else "vanished"}


def _contextual_entry(hit: Hit, static_ranks: dict[int, int]) -> dict[str, Any]:
    other = static_ranks.get(hit.document_id)
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
