"""How much one file's reading may produce and do: its text, the parts walked, the time.

The size cap bounds the bytes read (`indexer.reading.sources`) and the office readers bound the
bytes a zip unpacks to, but neither bounds what a reader makes of them: a 14 KB EPUB whose
spine lists one chapter 2,000 times gave 160 M characters, and a 38 KB .docx of 200,000
empty paragraphs gave none, after 200,000 turns of a reader's loop. So the readers of
containers (Word, PowerPoint, OpenDocument, EPUB, PDF) count what they make against
`ReadingLimits` as they go, through a `ReadingBudget`, and stop at the first limit passed
with an `UnreadableFile` naming it: that file's failure. A limit of what the file makes
(characters, parts) is its content's (`read_document` removes its indexed version); the
time limit is `ReadingTooSlow`, which depends on the machine too (its version is kept).

Plain text and HTML make at most about one character per byte, in work linear in their
bytes, so the size cap bounds them; `read_document` checks every reader's text once more.
What the limits cannot cut short is a single call into a library (parsing one XML part,
one page's text): that is bounded by the bytes it is given.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from indexer.errors import ReadingTooSlow, UnreadableFile

# As many characters as the 20 MB size cap lets a plain-text file hold: no text file the cap
# lets in is refused for its text, and no container gives more text than such a file.
MAX_TEXT_CHARACTERS = 20 * 1024 * 1024
# Parts are a document's blocks: paragraphs, tables and their cells, slides and shapes,
# OpenDocument elements, e-book chapters and their block elements, PDF pages. A book of
# 4,000 pages has fewer; a file of empty parts has no text to stop it.
MAX_PARTS = 200_000
# A backstop for work the parts do not measure (inline markup, a page the PDF library
# labours on), checked between parts and pieces of markup.
MAX_READING_SECONDS = 300.0

T = TypeVar("T")


@dataclass(frozen=True)
class ReadingLimits:
    """The most one file's reading may give (characters) and do (parts, seconds)."""

    characters: int = MAX_TEXT_CHARACTERS
    parts: int = MAX_PARTS
    seconds: float = MAX_READING_SECONDS


READING_LIMITS = ReadingLimits()


class ReadingBudget:
    """One file's reading counted against `limits`, its clock started when it is made.

    Every method raises `UnreadableFile` naming the limit as soon as one is passed.
    """

    def __init__(self, kind: str, limits: ReadingLimits = READING_LIMITS) -> None:
        self.kind = kind
        self.limits = limits
        self.characters = 0
        self.parts = 0
        self._deadline = time.monotonic() + limits.seconds

    def text(self, text: str) -> str:
        """`text`, counted towards the file's characters."""
        self.characters += len(text)
        if self.characters > self.limits.characters:
            raise text_over_limit(self.kind, self.limits)
        return text

    def counted(self, parts: Iterable[T]) -> Iterator[T]:
        """`parts`, each counted as one of the file's parts as it is reached."""
        for part in parts:
            self.parts += 1
            if self.parts > self.limits.parts:
                raise UnreadableFile(
                    f"the {self.kind} has over {self.limits.parts:,} parts (paragraphs, "
                    "cells, shapes, chapters, pages): too many to read"
                )
            self.check_time()
            yield part

    def timed(self, items: Iterable[T]) -> Iterator[T]:
        """`items` (pieces of a part: strings, inline markup), the clock checked at each."""
        for item in items:
            self.check_time()
            yield item

    def check_time(self) -> None:
        """Raise if the file's reading has taken longer than the limit."""
        if time.monotonic() >= self._deadline:
            raise ReadingTooSlow(
                f"reading the {self.kind} took over {self.limits.seconds:g} s: too slow to read"
            )


def text_over_limit(kind: str, limits: ReadingLimits = READING_LIMITS) -> UnreadableFile:
    """The failure of a file whose text passes the character limit."""
    return UnreadableFile(
        f"the {kind}'s text is over the limit of {limits.characters:,} characters"
    )
