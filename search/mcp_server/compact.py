"""The MCP tools' answers as a model reads them: what it needs to cite a hit and decide
whether it answers, and nothing it would have to read past.

By default (`detail: "compact"`) a `search` or `similar` hit keeps where it is (path,
line and end line, or page; the best-matching line), its section trail, snippet, match
label and contextual similarity, its chunk_id (for `read` and `similar`), and its copies,
record id and metadata, explanation when it has them; empty values are left out. The
response keeps the query, the mode, the hits and the hints; a `similar` item says how
many passages it has instead of listing their ids. `detail: "full"` gives the JSON the
command line prints (`query --json`, `similar --json`): offsets, highlights, scores,
`found_by`, timings and the query encoders.
"""

from __future__ import annotations

from typing import Any

DETAILS = ("compact", "full")
DEFAULT_DETAIL = "compact"
DETAIL_HELP = (
    "compact (default): each hit's path, line, end_line (or page), match_line, section, "
    "snippet, match, similarity and chunk_id; full: every key of the command line's JSON "
    "(start/end offsets, highlights, score, found_by, timings, ...)."
)

# A compact hit's keys, in the order shown.
HIT_KEYS = (
    "rank",
    "path",
    "line",
    "end_line",
    "page",
    "match_line",
    "match_page",
    "match_page_line",
    "section",
    "snippet",
    "match",
    "similarity",
    "chunk_id",
    "duplicates",
    "id",
    "metadata",
    "explain",
)
_EMPTY = (None, [], {}, "")


def compact_hit(hit: dict[str, Any]) -> dict[str, Any]:
    """A hit's keys a model needs, empty ones left out; its heading stands in for a
    section trail it lacks."""
    shown = dict(hit)
    if shown.get("section") in _EMPTY:
        shown["section"] = shown.get("heading")
    return {key: shown[key] for key in HIT_KEYS if shown.get(key) not in _EMPTY}


def compact_search(response: dict[str, Any]) -> dict[str, Any]:
    """A search's answer: its query, mode, compact hits, hints when it has any, and its
    completeness while a run fills the contextual space (the newest passages are found
    by their words only)."""
    shown: dict[str, Any] = {
        "query": response["query"],
        "mode": response["mode"],
        "results": [compact_hit(hit) for hit in response["results"]],
    }
    if response.get("hints"):
        shown["hints"] = response["hints"]
    completeness = response.get("completeness")
    if completeness and not completeness["contextual_complete"]:
        shown["completeness"] = completeness
    return shown


def compact_similar(response: dict[str, Any]) -> dict[str, Any]:
    """A similar search's answer: its item (its passage ids counted, not listed), mode
    and compact hits."""
    item = {
        key: value
        for key, value in response["item"].items()
        if key != "chunk_ids" and value not in _EMPTY
    }
    return {
        "item": item,
        "mode": response["mode"],
        "results": [compact_hit(hit) for hit in response["results"]],
    }
