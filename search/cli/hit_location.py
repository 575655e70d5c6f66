"""Where a hit is, as the command line shows it (`query` and `similar` tables)."""

from __future__ import annotations

from search.paths import display_path
from search.text import terminal_text


def hit_location(hit) -> str:  # hit: search.engine.Hit
    """`path:line` at the line that best matches (`path (page N, line L)` for a PDF,
    `path` alone when neither is known, or for a record, whose path is `record:ID`)."""
    shown = display_path(hit.path)
    if hit.id is not None:
        return terminal_text(hit.path)
    line = hit.match_line or hit.line
    if line is not None:
        return f"{shown}:{line}"
    page = hit.match_page or hit.page
    if page is not None:
        within = f", line {hit.match_page_line}" if hit.match_page_line else ""
        return f"{shown} (page {page}{within})"
    return shown
