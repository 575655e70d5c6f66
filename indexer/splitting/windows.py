"""Where to cut a run of tokens into windows, chosen from nearby content only.

Each place between two tokens gets a priority: how good a boundary it is
(`indexer.splitting.boundaries`, with section starts above paragraph breaks) and then a hash of the
few tokens around it. A place is a cut when its priority is the highest within `window`
tokens on either side and it lies more than `window` tokens from both ends of the run.
So whether a place is a cut depends only on the text within `window` (plus two) tokens
of it, and two cuts are always more than `window` tokens apart. A stretch between two
cuts that is still longer than `limit` is cut into stretches that fit: between two cuts,
the fewest of about equal length, each at the best place near its even share; the first
and the last stretch of the run are filled from their inner end instead, so that text
added at an end of the run moves only the cuts nearest that end. Either way the cuts
depend only on the stretch's own text.

This is what keeps an edit local: the cuts further than `window` (plus two) tokens from
an edit are where they were, so every stretch between two of them keeps its text; only
the stretches that reach into that neighbourhood of the edit can change.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence

import numpy as np

from indexer.splitting.boundaries import PARAGRAPH, break_scores

# A section start inside the run scores above a paragraph break, and more the higher
# its heading (level 1 highest).
_SECTION_START = PARAGRAPH + 1
_DEEPEST_LEVEL = 6
_HASHED_TOKENS = 2  # tokens on each side of a place that its hash reads
_SCORE_SHIFT = 32


def section_start_score(level: int) -> int:
    """The boundary score of the start of a section of heading level `level`."""
    return _SECTION_START + _DEEPEST_LEVEL - min(max(level, 1), _DEEPEST_LEVEL)


def cut_priorities(
    text: str, spans: Sequence[tuple[int, int]], scores: dict[int, int]
) -> np.ndarray:
    """The priority of the place before each token (index 0: none, -1); `scores` gives
    the boundary score of some places (section starts) instead of `break_score`."""
    priority = break_scores(text, spans)
    for index, score in scores.items():
        priority[index] = score
    digests = [_context_digest(text, spans, index) for index in range(1, len(spans))]
    priority[1:] = (priority[1:] << _SCORE_SHIFT) | np.array(digests, dtype=np.int64)
    return priority


def _context_digest(text: str, spans: Sequence[tuple[int, int]], index: int) -> int:
    """A hash of the text from `_HASHED_TOKENS` tokens before place `index` to as many
    after it."""
    first = spans[max(index - _HASHED_TOKENS, 0)][0]
    last = spans[min(index + _HASHED_TOKENS, len(spans)) - 1][1]
    return zlib.crc32(text[first:last].encode("utf-8", "surrogatepass"))


def content_cuts(priority: np.ndarray, lo: int, hi: int, limit: int, window: int) -> list[int]:
    """Cuts (token indices, each the first token after a cut) that split the tokens
    [lo, hi) into stretches of at most `limit` tokens, chosen as the module says."""
    if hi - lo <= limit:
        return []
    edges = [lo, *_local_maxima(priority, lo, hi, window), hi]
    cuts: list[int] = []
    for start, stop in itertools.pairwise(edges):
        if stop == hi:  # the last stretch: text added at the end moves only its last cuts
            cuts += _packed_cuts(priority, start, stop, limit, from_start=True)
        elif start == lo:  # the first: text added at the start moves only its first cuts
            cuts += _packed_cuts(priority, start, stop, limit, from_start=False)
            cuts.append(stop)
        else:
            cuts += [*_balanced_cuts(priority, start, stop, limit), stop]
    return cuts


def _local_maxima(priority: np.ndarray, lo: int, hi: int, window: int) -> list[int]:
    """The places in (lo, hi) more than `window` from both ends whose priority is above
    every other place's within `window` after it and not below any within `window` before
    it (so of equal neighbours the last wins, and no two are `window` or fewer apart)."""
    values = priority[lo + 1 : hi]  # the places strictly inside the run
    if len(values) <= 2 * window:
        return []
    padding = np.full(window, -1, dtype=np.int64)
    padded = np.concatenate([padding, values, padding])
    windows = np.lib.stride_tricks.sliding_window_view(padded, window)
    before = windows[: len(values)].max(axis=1)
    after = windows[window + 1 : window + 1 + len(values)].max(axis=1)
    chosen = (values >= before) & (values > after)
    chosen[:window] = chosen[len(values) - window :] = False  # too near an end
    return [lo + 1 + int(index) for index in np.flatnonzero(chosen)]


def _packed_cuts(priority: np.ndarray, lo: int, hi: int, limit: int, from_start: bool) -> list[int]:
    """Cuts splitting [lo, hi) into stretches of at most `limit` tokens, filled from one
    end (`lo` if `from_start`, else `hi`): each ends at the best boundary in the second
    half of its reach (the furthest of equal ones), until the rest is at most two
    stretches long, which are then balanced."""
    scores = priority >> _SCORE_SHIFT
    half = max(limit // 2, 1)
    cuts: list[int] = []
    start, stop = lo, hi
    while stop - start > 2 * limit:
        if from_start:
            reach = scores[start + half : start + limit + 1]
            start = start + half + len(reach) - 1 - int(np.argmax(reach[::-1]))
            cuts.append(start)
        else:
            reach = scores[stop - limit : stop - half + 1]
            stop = stop - limit + int(np.argmax(reach))
            cuts.append(stop)
    return sorted([*cuts, *_balanced_cuts(priority, start, stop, limit)])


def _balanced_cuts(priority: np.ndarray, lo: int, hi: int, limit: int) -> list[int]:
    """Cuts splitting [lo, hi) into the fewest stretches of at most `limit` tokens, of
    about equal length: each at the place of highest priority within a quarter of a
    stretch of its even share, and no further than lets the rest fit."""
    length = hi - lo
    count = -(-length // limit)
    reach = length // (4 * count)
    cuts, previous = [], lo
    for index in range(1, count):
        target = lo + round(index * length / count)
        first = max(target - reach, hi - (count - index) * limit, previous + 1)
        last = min(target + reach, previous + limit)
        best = first + int(np.argmax(priority[first : last + 1]))
        cuts.append(best)
        previous = best
    return cuts
