"""Where each line of a chunk's text sits in its file, for the formats whose text is not
the file: an HTML page's source line, a PDF's page and line within that page.

Stored with the chunk as JSON (`chunks.line_map`), one entry per line of the chunk's text
(the text split at "\\n"): an int (the 1-based source line) for HTML, `[page, line]` for a
PDF (the 1-based line counted from the top of that page's text). Plain text, Markdown,
reStructuredText and code need none: their lines are counted in the chunk's own text from
its `line`.
"""

from __future__ import annotations

import json
from typing import Any

LineMap = list[Any]  # int per line (HTML) or [page, line] per line (PDF)


def encode_line_map(entries: LineMap | None) -> str | None:
    """The map as the compact JSON stored (None stays None)."""
    return None if entries is None else json.dumps(entries, separators=(",", ":"))


def decode_line_map(stored: str | None) -> LineMap | None:
    """The stored JSON as a list, or None when there is none (or it cannot be read)."""
    if not stored:
        return None
    try:
        found = json.loads(stored)
    except ValueError:
        return None
    return found if isinstance(found, list) else None
