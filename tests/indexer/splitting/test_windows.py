"""Content-defined cuts: within the limit, far apart, and unmoved by an edit further away
than their window."""

from __future__ import annotations

import itertools
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.splitting.boundaries import break_score, break_scores
from indexer.splitting.windows import _local_maxima, content_cuts

# Few distinct values, so that ties (repeated text) are common.
PRIORITIES = st.lists(st.integers(0, 12), min_size=1, max_size=600)
EDIT = st.tuples(st.floats(0, 1), st.integers(0, 6), st.lists(st.integers(0, 12), max_size=6))


def as_priorities(values: list[int]) -> np.ndarray:
    return np.array([-1, *values], dtype=np.int64)  # no place before the first token


def edited(values: list[int], edit) -> tuple[list[int], int, int, int]:
    """`values` with a stretch replaced; the stretch's old [start, end) in token indices
    (the place before token i is `i`) and the shift of what follows it."""
    where, length, replacement = edit
    start = 1 + int(where * len(values))
    end = min(start + length, len(values) + 1)
    new = values[: start - 1] + replacement + values[end - 1 :]
    return new, start, end, len(replacement) - (end - start)


def stable_anchor_bounds(anchors: list[int], start: int, end: int, window: int, size: int):
    """The last anchor whose window ends before the edit, the first whose window starts
    after it (the ends of the run when there is none)."""
    left = max((a for a in anchors if a + window < start), default=0)
    right = min((a for a in anchors if a - window >= end), default=size)
    return left, right


@settings(max_examples=400, deadline=None)
@given(PRIORITIES, st.integers(1, 40), EDIT)
def test_a_place_is_a_cut_or_not_whatever_happens_beyond_its_window(values, window, edit):
    new_values, start, end, shift = edited(values, edit)
    old, new = as_priorities(values), as_priorities(new_values)
    old_anchors = set(_local_maxima(old, 0, len(old), window))
    new_anchors = set(_local_maxima(new, 0, len(new), window))
    for place in range(1, len(old)):
        if place + window < start:
            assert (place in old_anchors) == (place in new_anchors)
        elif place - window >= end:
            assert (place in old_anchors) == (place + shift in new_anchors)
    for first, second in zip(sorted(new_anchors), sorted(new_anchors)[1:], strict=False):
        assert second - first > window


@settings(max_examples=400, deadline=None)
@given(PRIORITIES, st.integers(2, 60), st.floats(0.05, 1.0), EDIT)
def test_cuts_fit_the_limit_and_only_those_near_an_edit_move(values, limit, share, edit):
    window = max(1, int(limit * share))
    old = as_priorities(values)
    cuts = content_cuts(old, 0, len(old), limit, window)
    edges = [0, *cuts, len(old)]
    assert all(0 < b - a <= limit for a, b in itertools.pairwise(edges))

    new_values, start, end, shift = edited(values, edit)
    new = as_priorities(new_values)
    new_cuts = content_cuts(new, 0, len(new), limit, window)
    if len(old) <= limit or len(new) <= limit:
        return
    anchors = _local_maxima(old, 0, len(old), window)
    left, right = stable_anchor_bounds(anchors, start, end, window, len(old))
    assert [c for c in cuts if c <= left] == [c for c in new_cuts if c <= left]
    if right < len(old):
        assert [c + shift for c in cuts if c >= right] == [
            c for c in new_cuts if c >= right + shift
        ]


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=300)
    | st.lists(st.sampled_from(["word", ".", " ", "\n", "\n\n", "?", "\u3000", "x\u00a0"])).map(
        "".join
    ),
    st.sampled_from(["words", "letters", "clumps"]),
)
def test_all_break_scores_at_once_are_each_break_score(text, tokenizer):
    """The vectorised scores equal the one-by-one ones, for any text and tokenization."""
    pattern = {"words": r"\w+|[^\w\s]", "letters": r"\S", "clumps": r"\S{1,3}"}[tokenizer]
    spans = [match.span() for match in re.finditer(pattern, text)]
    expected = [-1] + [break_score(text, spans, index) for index in range(1, len(spans))]
    assert break_scores(text, spans).tolist() == (expected if spans else [])
