"""Where a hit is, as the command line shows it (`query` and `similar` tables)."""

from __future__ import annotations

from search.paths import display_path
from search.text import terminal_text


def hit_location(hit) -> str:  # hit: search.engine.Hit
    """`path:line` (or `path (page N)` for a PDF, `path` alone when neither is known, or
    for a record, whose path is `record:ID`)."""
    shown = display_path(hit.path)
    if hit.id is not None:
        return terminal_text(hit.path)
    if hit.line is not None:
        return f"{shown}:{hit.line}"
    if hit.page is not None:
        return f"{shown} (page {hit.page})"
    return shown
