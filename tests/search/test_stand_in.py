"""Stand-in contextual scores for passages the fill has not reached (`search.stand_in`)."""

from __future__ import annotations

from search.stand_in import stand_in_cosines


def test_a_passage_without_a_contextual_score_takes_the_one_at_its_lexical_rank():
    dense = [(1, 0.9), (2, 0.7), (3, 0.4)]
    lexical = [(7, 12.0), (2, 9.0), (8, 5.0), (9, 4.0), (10, 1.0)]
    known = {1: 0.9, 2: 0.7, 3: 0.4, 8: 0.1}  # 8 was looked up: it has a vector
    assert stand_in_cosines(dense, lexical, known) == {7: 0.9, 9: 0.4, 10: 0.4}


def test_no_stand_in_when_the_contextual_side_found_nothing():
    assert stand_in_cosines([], [(7, 12.0)], {}) == {}
