"""Clean the text layer a PDF extractor gives: ligatures, line-end hyphens, run-together words.

Typeset PDFs store "ﬁ" and "ﬃ" as single ligature characters, break words across lines
with a hyphen, and sometimes place words with no space character between them. Left as
they are, `diﬃcult` is one unknown token and "sys-\\ntem" two, so neither a lexical nor a
dense query finds them. These functions turn the extractor's text into the words a reader
sees; the result is the document's extracted text, which chunk offsets point into.
"""

from __future__ import annotations

import re
import unicodedata

# The Latin and Armenian ligatures of Unicode's Alphabetic Presentation Forms block. Only
# these are mapped: NFKC over the whole text would also turn x² into x2 and ™ into TM,
# changing what a formula says.
_LIGATURES = re.compile("[\ufb00-\ufb06\ufb13-\ufb17]")

# A word broken at a line end: a lowercase letter, a hyphen (ASCII, soft or Unicode), the
# line break, then the rest of the word starting with a lowercase letter. Capitalised or
# numeric tails ("Smith-\nJones", "RFC-\n2616") are left alone.
_LINE_END_HYPHEN = re.compile(
    r"(?P<head>[^\W\d_]*[a-z\u00df-\u00ff])[-\u00ad\u2010]\n[ \t]*"
    r"(?P<tail>[a-z\u00df-\u00ff][^\s]*)(?P<gap>[ \t]+)?"
)
_WORD_EDGE_PUNCTUATION = ".,;:!?)]}\"'\u201d\u2019"


def map_ligatures(text: str) -> str:
    """Replace each ligature character by its NFKC letters (ﬁ -> fi, ﬃ -> ffi)."""
    return _LIGATURES.sub(lambda match: unicodedata.normalize("NFKC", match.group()), text)


def join_line_end_hyphens(text: str) -> str:
    """Join words broken across a line end by a hyphen ("sys-\\ntem" -> "system").

    The joined word stays on the first line and the line break moves to just after it,
    so the text keeps its number of lines. A compound the document also spells with a
    hyphen elsewhere, and never without ("data-\\nintensive" where "data-intensive"
    appears), keeps its hyphen.
    """
    words = set(re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)*", text))

    def joined(match: re.Match[str]) -> str:
        head, tail = match.group("head"), match.group("tail")
        tail_word = tail.rstrip(_WORD_EDGE_PUNCTUATION)
        hyphenated = f"{head}-{tail_word}"
        keep_hyphen = hyphenated in words and f"{head}{tail_word}" not in words
        word = f"{head}-{tail}" if keep_hyphen else f"{head}{tail}"
        return word + ("\n" if match.group("gap") else "")

    return _LINE_END_HYPHEN.sub(joined, text)


def split_run_together(text: str, layout_text: str) -> str:
    """Split the words of `text` that `layout_text` shows as separate words.

    `layout_text` is the same page extracted in the extractor's layout mode, which places
    each glyph by its position and so sees a gap between words that were drawn with no
    space character. A token of `text` is split only when it is absent from the layout
    text as a whole and equals two or three consecutive layout tokens run together, each
    with a letter or digit in it.
    """
    layout_words = layout_text.split()
    known = set(layout_words)
    splits: dict[str, str] = {}
    for size in (2, 3):
        for start in range(len(layout_words) - size + 1):
            parts = layout_words[start : start + size]
            # A part of punctuation only ("syntax" "." drawn apart) is not a word of its own.
            if all(any(char.isalnum() for char in part) for part in parts):
                splits.setdefault("".join(parts), " ".join(parts))

    def split(match: re.Match[str]) -> str:
        token = match.group()
        return token if token in known else splits.get(token, token)

    return re.sub(r"\S+", split, text)


def clean_pdf_text(text: str) -> str:
    """Ligatures mapped and line-end hyphens joined (run-together words are split per page)."""
    return join_line_end_hyphens(map_ligatures(text))
