"""Short, readable excerpts of chunk text for result lists."""

from __future__ import annotations

import re

_WHITESPACE = re.compile(r"\s+")


def make_snippet(text: str, limit: int = 240) -> str:
    """The text on one line, cut at a word boundary near `limit` characters."""
    flat = _WHITESPACE.sub(" ", text).strip()
    if len(flat) <= limit:
        return flat
    cut = flat.rfind(" ", 0, limit)
    return flat[: cut if cut > limit // 2 else limit].rstrip(" ,;:") + " …"
