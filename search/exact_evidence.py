"""Exact evidence in hybrid search: a passage holding what the user typed stays in view.

People type the name of what they look for: an identifier (`ProxyFix`,
`SEND_FILE_MAX_AGE_DEFAULT`), a phrase (`hinted handoff`), a word only a few passages
hold. The passages holding it are the answer, but fused scores let a dense side sure of
a near-miss outvote them (over systems papers, `hinted handoff` once left the Dynamo
paper, the one holding the phrase, out of the first hits). So after fusing, hybrid reads
the lexical side's evidence, and when it is exact keeps it within the first `PLACES`
hits:

- coverage: a passage *holds the query* when it holds every term the lexical side looks
  for (stop words aside, stemmed as the lexical space stems them; a term the lexical
  space reads as several words, an identifier split at its underscores, with its words
  adjacent and in order);
- rarity: few passages hold the query, at most `RARE_PASSAGES` (a word only a few
  passages hold, a combination of words only a few hold together);
- margin: the lexical side's own best passage holds the query (no passage holding only
  some of its terms outscores it);
- the dense side's view: a hit that does not hold the query and in which the dense side
  sees no match (contextual cosine below `DENSE_NO_MATCH`) does not outrank it.

When the lexical side's best passage is such an exact match and none of the first
`PLACES` hits holds the query, that passage moves up above the hits the dense side sees
no match in that stand right before it, and to place `PLACES` at the lowest; it takes
the score of the hit it passes (when its document is already in view through another
passage, it shows the document there instead). Everything else keeps the fused order:
the dense side still orders the rest, and the exact match itself when it is in view.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from indexer.store.base import StoredChunk
from search.snippets import stem

# How many of the first hits a clear exact match is kept among.
PLACES = 3
# At most how many passages may hold the query for its exact match to count as rare.
RARE_PASSAGES = 10
# The contextual cosine below which the dense side sees no match in a passage (the
# `none` bar of `search.match_thresholds` when this rule was measured).
DENSE_NO_MATCH = 0.3

# Letters and digits, as the lexical space's tokenizer (FTS5 unicode61) splits words.
_WORD = re.compile(r"[^\W_]+")

Ranked = Sequence[tuple[int, float]]


@dataclass(frozen=True)
class ExactMatch:
    """The lexical side's best passage when it is an exact match, and every passage of
    the lexical list holding the query."""

    chunk_id: int
    holders: frozenset[int]


def query_words(terms: Sequence[str]) -> list[tuple[str, ...]]:
    """Each query term as the stems of the words the lexical space splits it into."""
    words = [tuple(stem(word) for word in _WORD.findall(term)) for term in terms]
    return [stems for stems in words if stems]


def holds_query(text: str, wanted: Sequence[tuple[str, ...]]) -> bool:
    """Whether `text` holds every term of `wanted` (`query_words`), a term of several
    words as adjacent words in order."""
    if not wanted:
        return False
    lowered = text.lower()
    # a text without each stem's opening cannot hold it: most passages end here
    if not all(_opening(word) in lowered for stems in wanted for word in stems):
        return False
    return all(_holds_term(lowered, stems) for stems in wanted)


def _opening(word: str) -> str:
    """What every word with this stem opens with: the stem but its last letter, which
    Porter stemming may have rewritten (happy -> happi)."""
    return word[: max(1, len(word) - 1)]


def _holds_term(lowered: str, stems: tuple[str, ...]) -> bool:
    """Whether a lower-cased text holds these stems as adjacent words, in order. Only the
    words that open as the stems do are stemmed (`_term_pattern`)."""
    for found in _term_pattern(stems).finditer(lowered):
        if all(stem(word) == wanted for word, wanted in zip(found.groups(), stems, strict=True)):
            return True
    return False


@lru_cache(maxsize=1024)
def _term_pattern(stems: tuple[str, ...]) -> re.Pattern[str]:
    """Adjacent words, in order, each a whole word opening as its stem does. The pattern
    opens with that text, not a look-behind, so that it is searched for as a string."""
    words = []
    for word in stems:
        opening = re.escape(_opening(word))
        # the opening, then a check that no letter or digit stands before it
        words.append(rf"({opening}(?<![^\W_].{{{len(_opening(word))}}})[^\W_]*)")
    return re.compile(r"[\W_]+".join(words) + r"(?![^\W_])", re.DOTALL)


def exact_match(
    terms: Sequence[str], lexical: Ranked, chunks: Mapping[int, StoredChunk]
) -> ExactMatch | None:
    """The lexical side's exact match for a query with these `terms` (see the module),
    from its list (`lexical`, best first) and the listed passages' rows (`chunks`); None
    when its best passage does not hold the query or more than `RARE_PASSAGES` do."""
    wanted = query_words(terms)
    if not lexical or not wanted:
        return None
    holders: list[int] = []
    for chunk_id, _score in lexical:
        chunk = chunks.get(chunk_id)
        if chunk is not None and holds_query(chunk.text, wanted):
            holders.append(chunk_id)
            if len(holders) > RARE_PASSAGES:
                return None
        elif not holders:
            return None  # the lexical side's best does not hold the query: no margin
    return ExactMatch(holders[0], frozenset(holders))


def keep_in_view(
    ranked: Ranked,
    exact: ExactMatch,
    unit_of: Callable[[int], object],
    similarities: Mapping[int, float],
    places: int = PLACES,
) -> list[tuple[int, float]]:
    """`ranked` (chunk id, fused score; best first) with `exact`'s passage moved into
    the first `places` hits (see the module). A hit is the first chunk of its unit
    (`unit_of`: its document, or the chunk itself when every chunk is a hit); a chunk
    without a cosine in `similarities` counts as one the dense side sees no match in."""
    ranked = list(ranked)
    target = next((i for i, (chunk_id, _) in enumerate(ranked) if chunk_id == exact.chunk_id), None)
    if target is None:
        return ranked
    own_unit = unit_of(exact.chunk_id)
    head: list[int] = []  # the indexes of the first `places` hits
    seen: set[object] = set()
    for index, (chunk_id, _score) in enumerate(ranked[:target]):
        unit = unit_of(chunk_id)
        if unit in seen:
            continue
        seen.add(unit)
        if chunk_id in exact.holders:
            return ranked  # a hit holding the query is already in view
        head.append(index)
        if unit == own_unit:  # its document is in view through another passage: shown
            return _moved(ranked, target, index)  # by the one holding the query instead
        if len(head) == places:
            break
    if len(head) < places:
        return ranked  # already among the first hits
    place = len(head) - 1
    while place > 0 and _unseen(ranked[head[place - 1]][0], similarities):
        place -= 1  # the dense side sees no match in the hit before it either
    return _moved(ranked, target, head[place])


def _moved(ranked: list[tuple[int, float]], source: int, place: int) -> list[tuple[int, float]]:
    """`ranked` with the chunk at `source` moved up to `place`, taking that hit's score."""
    chunk_id, _score = ranked.pop(source)
    ranked.insert(place, (chunk_id, ranked[place][1]))
    return ranked


def _unseen(chunk_id: int, similarities: Mapping[int, float]) -> bool:
    """Whether the dense side sees no match in this chunk."""
    return similarities.get(chunk_id, -1.0) < DENSE_NO_MATCH
