"""The judged-hits fit of `match` (lab.match_judged): every judged hit needs a reader's
judgment, negatives are unrelated unread, and the fit finds thresholds that separate
hits a reader told apart."""

from __future__ import annotations

import json

import pytest

from lab import match_judged
from search.match_thresholds import THRESHOLDS


def _hit(query, ordinal, similarity, coverage, kind="question", content=True):
    return {
        "query": query,
        "path": "docs/a.md",
        "ordinal": ordinal,
        "rank": ordinal + 1,
        "kind": kind,
        "similarity": similarity,
        "coverage": coverage,
        "content": content,
    }


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_every_judged_hit_needs_a_judgment_and_negatives_are_unrelated(tmp_path):
    hits = _write(
        tmp_path / "hits.jsonl",
        [_hit("q1", 0, 0.7, 1.0), _hit("s1", 0, 0.2, 1.0, "stop-words", content=False)],
    )
    judged = _write(
        tmp_path / "judged.jsonl",
        [{"query": "q1", "path": "docs/a.md", "ordinal": 0, "judgment": "answer"}],
    )
    found = match_judged.judged_hits([hits], [judged])
    assert [hit["judgment"] for hit in found] == ["answer", "unrelated"]
    with pytest.raises(SystemExit, match="no judgment"):
        match_judged.judged_hits([hits], [_write(tmp_path / "none.jsonl", [])])


def test_the_fit_separates_what_the_reader_told_apart():
    hits = []
    for number in range(6):
        query = f"q{number}"
        for ordinal, (similarity, coverage, judgment) in enumerate(
            [(0.75, 0.9, "answer"), (0.45, 0.5, "related"), (0.15, 0.1, "unrelated")]
        ):
            hits.append({**_hit(query, ordinal, similarity, coverage), "judgment": judgment})
    coarse = {name: values[::3] for name, values in match_judged.GRID.items()}
    fitted, score = match_judged.fit(hits, coarse)
    assert score == 1.0
    report = match_judged.agreement(hits, fitted)
    assert report["agreement"] == 1.0
    assert {label: row["precision"] for label, row in report["per_label"].items()} == {
        "strong": 1.0,
        "weak": 1.0,
        "none": 1.0,
    }
    assert match_judged.objective(hits, THRESHOLDS) <= score


def test_the_calibration_reads_the_no_answer_queries_of_the_repository():
    from lab import match_calibration

    assert match_calibration.NO_ANSWER.is_file(), match_calibration.NO_ANSWER


def test_the_sides_rule_is_fitted_only_where_it_beats_todays_labels():
    """Answers both sides rank in their first 3 at a similarity today's thresholds call
    weak: the fit takes a bar that makes them strong; where related passages are ranked
    so as often, it leaves the rule out."""
    both, one = {"contextual": 1, "lexical": 2}, {"contextual": 1, "lexical": 9}
    hits = []
    for number in range(4):
        for ordinal, (ranks, judgment) in enumerate([(both, "answer"), (one, "related")]):
            hit = {**_hit(f"q{number}", ordinal, 0.45, 0.2), "found_by": ranks}
            hits.append({**hit, "judgment": judgment})
    assert [match_judged.label_with_sides(hit, None) for hit in hits[:2]] == ["weak", "weak"]
    bar, scores = match_judged.fit_sides(hits)
    assert bar is not None and bar <= 0.45 and scores[str(bar)] > scores["None"]
    assert match_judged.label_with_sides(hits[0], bar) == "strong"
    blurred = [{**hit, "found_by": both} for hit in hits]
    assert match_judged.fit_sides(blurred)[0] is None


def test_the_first_hit_rule_is_fitted_only_where_it_beats_todays_labels():
    """Second hits holding the query's terms at a similarity the first hit would be strong
    at, judged related: the fit takes a bar above them; where they are answers, it leaves
    the rule out (the term evidence counted at every rank)."""
    hits = []
    for number in range(4):
        for ordinal, judgment in enumerate(["answer", "related"]):
            hit = _hit(f"q{number}", ordinal, 0.6, 1.0)
            hits.append({**hit, "judgment": judgment})
    bar, scores = match_judged.fit_first(hits)
    assert bar is not None and bar > 0.6 and scores[str(bar)] > scores["None"]
    fitted = match_judged.replace(THRESHOLDS, strong_similarity_after_first=bar)
    assert [match_judged.label_of(hit, fitted) for hit in hits[:2]] == ["strong", "weak"]
    answers = [{**hit, "judgment": "answer"} for hit in hits]
    assert match_judged.fit_first(answers)[0] is None
