"""Whether a passage is navigation: a table of contents, an index or a sitemap.

A table of contents names every chapter it links to, so it resembles each of them a
little, in words and in meaning: an mdBook's `SUMMARY.md` was `similar`'s first
neighbour of whole chapters, Python's index pages the first lexical hit of questions
they only name. Such a passage is read from its text as a reader sees it (`search.markup`):

- its lines are titles: at most `TITLE_WORDS` words, not ending like a sentence or a
  clause (`.`, `,`, `;`, `:`), after a list bullet or number is taken off, and not a
  line of code (a call with arguments, an assignment, a statement or prompt at its
  start: HTML read with its inline elements joined shows code lines whole, with few of
  the symbols below). Link labels are titles once their targets are gone, so a list of
  links reads the same; an index's `abs() (built-in function)` is a title;
- at least `TITLE_SHARE` of its lines are titles, holding at least that share of its
  characters, and there are at least `TITLE_LINES` of them;
- it is not code: at most `CODE_SHARE` of its visible characters are the symbols code
  is written with (`=`, brackets, quotes, ...), since a code block or a shell session
  also has short lines that end without a full stop.

Measured on the Rust book, Python's HTML documentation and Flask's and FastAPI's docs
(docs/reports/2026-12-06-crowding.md): every passage of the book's `SUMMARY.md` and most
of Python's index pages' are navigation, against 0.4% to 1.6% of the other pages'
passages (a page's own contents list, a list of short items), which lose little: their
page is still shown by its next passage (see `search.placing`).
"""

from __future__ import annotations

import re

from indexer.reading.formats import text_kind
from search.markup import plain_text

# A title has at most this many words.
TITLE_WORDS = 10
# Title lines are at least this share of a navigation passage's lines and characters ...
TITLE_SHARE = 0.8
# ... over at least this many lines (a short passage of two titles says little).
TITLE_LINES = 3
# At most this share of a navigation passage's visible characters are code symbols.
CODE_SHARE = 0.03
_CODE_SYMBOLS = frozenset('={}[]<>;"`*\\|#@$%^~+')
_BULLET = re.compile(r"^(?:[-*+\u2022]|\d+[.)])\s+")
_CLAUSE_ENDS = (".", ",", ";", ":")
_CODE_LINE = re.compile(
    r"\w\([^()\s]|\s=\s|^(?:import|from|def|class|return|for|if|with|await|async|>>>|\$)\s"
)


def is_navigation(text: str, path: str) -> bool:
    """Whether the passage `text` of the file at `path` is navigation (see the module)."""
    plain = plain_text(text, text_kind(path))
    lines = [_BULLET.sub("", line.strip()) for line in plain.splitlines() if line.strip()]
    titles = [line for line in lines if _is_title(line)]
    if len(titles) < TITLE_LINES:
        return False
    if len(titles) < TITLE_SHARE * len(lines):
        return False
    if sum(map(len, titles)) < TITLE_SHARE * sum(map(len, lines)):
        return False
    visible = [character for character in plain if not character.isspace()]
    code = sum(character in _CODE_SYMBOLS for character in visible)
    return code <= CODE_SHARE * len(visible)


def _is_title(line: str) -> bool:
    return (
        len(line.split()) <= TITLE_WORDS
        and not line.endswith(_CLAUSE_ENDS)
        and any(character.isalpha() for character in line)
        and not _CODE_LINE.search(line)
    )
