"""The line of a passage that best matches a query: the line a reader should jump to.

Lexical first: each line scores the query terms it holds (stemmed as the lexical space
stems them), each term weighted by how few of the passage's lines hold it, so that a line
with the rare word of the query beats a line that repeats the common one. Where lines tie
(or none holds a term), their similarity to the query in the static space decides, when
the index has one: the mean of the model's token vectors for the line against the query's
(a table lookup per token, no transformer run). Measured against lexical alone and the
static space alone in docs/reports/2026-12-01-match-line.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from search.snippets import stem

_WORD = re.compile(r"\w+")
# The similarity of each line to the query (higher is better), or None: lexical only.
LineSimilarity = Callable[[list[str]], Sequence[float]]


@dataclass(frozen=True)
class MatchedLine:
    """Which line of a passage's text matched best (0 = its first) and where it lies in
    the passage's text: [offset, end)."""

    index: int
    offset: int
    end: int


def lexical_line_scores(lines: Sequence[str], terms: Sequence[str]) -> list[float]:
    """Each line's score: the sum, over the distinct query terms in it, of the term's
    weight log(1 + lines / lines holding it)."""
    wanted = {stem(term) for term in terms}
    found = [{stem(word) for word in _WORD.findall(line)} & wanted for line in lines]
    holding = {term: sum(term in stems for stems in found) for term in wanted}
    weight = {term: math.log1p(len(lines) / count) for term, count in holding.items() if count}
    return [sum(weight[term] for term in stems) for stems in found]


def best_line(
    text: str,
    terms: Sequence[str],
    similarity: LineSimilarity | None = None,
    method: str = "both",
) -> MatchedLine:
    """The best line of `text` for a query with these terms (`method`: `lexical`,
    `static` (similarity only) or `both` (lexical, ties broken by similarity)). Blank
    lines are never chosen while another line exists."""
    lines = text.split("\n")
    candidates = [n for n, line in enumerate(lines) if line.strip()] or [0]
    lexical = lexical_line_scores(lines, terms) if method != "static" else [0.0] * len(lines)
    top = max(lexical[n] for n in candidates)
    tied = [n for n in candidates if lexical[n] == top]
    if len(tied) > 1 and similarity is not None and method != "lexical":
        scores = similarity([lines[n] for n in tied])
        tied = [tied[max(range(len(tied)), key=lambda i: scores[i])]]
    index = tied[0]
    offset = sum(len(line) + 1 for line in lines[:index])
    return MatchedLine(index, offset, offset + len(lines[index]))


@dataclass(frozen=True)
class MatchLocation:
    """Where a hit's best line is: [start, end) in the document's extracted text; `line`
    in the file (text formats and HTML), or `page` and `page_line` (the line within that
    page) for a PDF; None where unknown."""

    start: int
    end: int
    line: int | None = None
    page: int | None = None
    page_line: int | None = None


def match_location(
    chunk,  # indexer.store.base.StoredChunk
    terms: Sequence[str],
    similarity: LineSimilarity | None = None,
    method: str = "both",
) -> MatchLocation:
    """The file location of `chunk`'s best line for the query (see `best_line`)."""
    from indexer.reading.line_map import decode_line_map

    matched = best_line(chunk.text, terms, similarity, method)
    span = {"start": chunk.start + matched.offset, "end": chunk.start + matched.end}
    mapped = decode_line_map(chunk.line_map)
    if mapped is not None and matched.index < len(mapped):
        entry = mapped[matched.index]
        if isinstance(entry, list) and len(entry) == 2:
            return MatchLocation(**span, page=entry[0], page_line=entry[1])
        if isinstance(entry, int):
            return MatchLocation(**span, line=entry)
    if mapped is None and chunk.line is not None:
        return MatchLocation(**span, line=chunk.line + matched.index)
    return MatchLocation(**span, line=chunk.line, page=chunk.page)
