"""The line of a passage that best matches a query: the line a reader should jump to.

Each line scores the query terms it holds (stemmed as the lexical space stems them, stop
words left out), each term weighted by how few of the passage's lines hold it, so that a
line with the rare word of the query beats a line that repeats the common one; ties go to
the earliest line. When the search has encoded the query in the static space anyway
(`static` mode), ties are decided by each line's similarity to it there (the mean of the
model's token vectors: a table lookup per token, no transformer run). Measured against
the static space alone, a mix of the two and the passage's first line in
docs/reports/2026-12-01-match-line.md: the static space helps a little and its token
table would cost a one-shot `ctxsearch query` about half a second to load.
"""

from __future__ import annotations

import itertools
import math
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from indexer.cjk import has_cjk
from search.snippets import stem

# A word is a run of letters and digits: underscores split `sort_keys` into "sort" and
# "keys", as the lexical space's tokenizer (FTS5 unicode61) does; measured in
# docs/reports/2026-12-01-quality-26.md (9 to 11 answer lines of 60 top-3 hits).
_WORD = re.compile(r"[^\W_]+")
_WORD_START = r"(?<![^\W_])(?=[^\W_])"

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
    weight log(1 + lines / lines holding it). Words split at underscores, on both sides."""
    wanted = {stem(word) for term in terms for word in _WORD.findall(term)}
    found: list[set[str]] = [set() for _ in lines]
    # a query's CJK characters and pairs (`indexer.cjk`) are found in a line as they are
    cjk = {term for term in wanted if has_cjk(term)}
    for stems, line in zip(found, lines, strict=True):
        stems.update(term for term in cjk if term in line)
    wanted_words = wanted - cjk
    if wanted_words:
        # Porter stemming rewrites only a word's ending ("is" -> "i" at most shortens
        # it), so only the words opening with a wanted stem's first letters are stemmed.
        openings = "|".join(sorted({re.escape(term[:2]) for term in wanted_words}))
        text = "\n".join(lines)
        starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
        for match in re.finditer(rf"{_WORD_START}(?:{openings})[^\W_]*", text, re.IGNORECASE):
            stemmed = stem(match.group())
            if stemmed in wanted_words:
                found[bisect_right(starts, match.start()) - 1].add(stemmed)
    holding = {term: sum(term in stems for stems in found) for term in wanted}
    weight = {term: math.log1p(len(lines) / count) for term, count in holding.items() if count}
    return [sum(weight[term] for term in stems) for stems in found]


def best_line(
    text: str,
    terms: Sequence[str],
    similarity: LineSimilarity | None = None,
    method: str = "both",
    places: Sequence[object] | None = None,
) -> MatchedLine:
    """The best line of `text` for a query with these terms (`method`: `lexical`,
    `static` (similarity only), `both` (lexical, ties broken by similarity; the engine's)
    or `mix` (the sum of both scores, each scaled to the passage's best; measured, not
    adopted)); without `similarity`, ties go to the earliest line. Blank
    lines are never chosen while another line exists. `places` (one per line of `text`)
    says where each line sits in the file: consecutive lines at the same place (an HTML
    source line that the reader split at its inline tags) are scored as one line."""
    lines = text.split("\n")
    groups = _groups(lines, places)
    joined = [" ".join(lines[first:last]) for first, last in groups]
    candidates = [n for n, line in enumerate(joined) if line.strip()] or [0]
    lexical = lexical_line_scores(joined, terms) if method != "static" else [0.0] * len(joined)
    top = max(lexical[n] for n in candidates)
    if method == "mix" and similarity is not None:
        cosines = similarity([joined[n] for n in candidates])
        low, high = min(cosines), max(cosines)
        spread, scale = (high - low) or 1.0, top or 1.0
        mixed = [
            lexical[n] / scale + (c - low) / spread
            for n, c in zip(candidates, cosines, strict=True)
        ]
        tied = [candidates[max(range(len(candidates)), key=lambda i: mixed[i])]]
    else:
        tied = [n for n in candidates if lexical[n] == top]
    if len(tied) > 1 and similarity is not None and method != "lexical":
        scores = similarity([joined[n] for n in tied])
        tied = [tied[max(range(len(tied)), key=lambda i: scores[i])]]
    first, last = groups[tied[0]]
    offset = sum(len(line) + 1 for line in lines[:first])
    end = offset + sum(len(line) + 1 for line in lines[first:last]) - 1
    return MatchedLine(first, offset, end)


def _groups(lines: list[str], places: Sequence[object] | None) -> list[tuple[int, int]]:
    """[first, last) runs of lines that share a place (each line its own without places)."""
    if places is None or len(places) != len(lines):
        return [(n, n + 1) for n in range(len(lines))]
    groups: list[tuple[int, int]] = []
    for n, place in enumerate(places):
        if groups and places[groups[-1][0]] == place:
            groups[-1] = (groups[-1][0], n + 1)
        else:
            groups.append((n, n + 1))
    return groups


def static_line_similarity(encoder, query_vector) -> LineSimilarity:
    """Lines against the query's unit vector in a vector space, by `encoder` (an
    `indexer.encoders.base.Encoder` giving unit vectors): their cosines."""

    def similarity(lines: list[str]) -> list[float]:
        return (encoder.encode(lines) @ query_vector).tolist()

    return similarity


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
) -> MatchLocation:  # (`method`: see `best_line`)
    """The file location of `chunk`'s best line for the query (see `best_line`)."""
    from indexer.reading.line_map import decode_line_map

    mapped = decode_line_map(chunk.line_map)
    matched = best_line(chunk.text, terms, similarity, method, mapped)
    span = {"start": chunk.start + matched.offset, "end": chunk.start + matched.end}
    if mapped is not None and matched.index < len(mapped):
        entry = mapped[matched.index]
        if isinstance(entry, list) and len(entry) == 2:
            return MatchLocation(**span, page=entry[0], page_line=entry[1])
        if isinstance(entry, int):
            return MatchLocation(**span, line=entry)
    if mapped is None and chunk.line is not None:
        return MatchLocation(**span, line=chunk.line + matched.index)
    return MatchLocation(**span, line=chunk.line, page=chunk.page)
