"""How a structured document's headings are written into its extracted text.

Word, PowerPoint, OpenDocument and EPUB files know which paragraphs are headings; their
readers write each one as a Markdown heading line (`## Title` for a level-2 heading), so
everything downstream that finds headings in Markdown finds them in these formats too.
This is the one place that mapping lives.
"""

from __future__ import annotations

_DEEPEST = 6  # Markdown has six heading levels; deeper outline levels are written as six


def markdown_heading(level: int, title: str) -> str:
    """`title` as one Markdown heading line of `level` (clamped to 1..6), or "" if blank."""
    words = " ".join(title.split())
    if not words:
        return ""
    return "#" * min(max(level, 1), _DEEPEST) + " " + words
