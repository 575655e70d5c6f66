"""The match signal (issue 27 item 3): `match` (strong, weak, none) on every hit from its
similarity and its IDF-weighted term coverage, in every mode and on both stores; the
similarity a table shows and the `--min-similarity` cut agree to the digit shown."""

from __future__ import annotations

import json
import math
import re

import httpx
import pytest
from click.testing import CliRunner

from indexer import Indexer
from search.cli import cli
from search.cli.shown_similarity import shown_similarity
from search.engine import Searcher
from search.match import MatchEvidence, idf, match_label
from search.match_thresholds import THRESHOLDS
from search.modes import MODES
from tests.conftest import SAMPLE_CORPUS

NONSENSE = "qwxz blorfen snargle"
TEXTS = {
    "otters.txt": "Otters build dens of reeds near the river and eat fish.",
    "floods.txt": "The river floods the meadow every spring after the rains.",
    "bread.txt": "Bakers knead the dough and leave the bread to rise overnight.",
}


@pytest.fixture
def word_index(any_index, fast_model, tmp_path):
    folder = tmp_path / "words"
    folder.mkdir()
    for name, text in TEXTS.items():
        (folder / name).write_text(text + "\n")
    Indexer(any_index, model=fast_model).index_folder(folder)
    return any_index


@pytest.mark.parametrize("mode", MODES)
def test_each_hit_has_its_term_coverage_and_the_label_of_its_evidence(word_index, mode):
    otters, river = idf(3, 1), idf(3, 2)  # 3 passages; "otters" in one, "river" in two
    unknown = idf(3, 0)  # a word the index never saw weighs most
    expected = {
        "otters river": {"otters.txt": 1.0, "floods.txt": river / (otters + river)},
        "qwxz otters": {"otters.txt": otters / (unknown + otters)},
    }
    with Searcher(word_index) as searcher:
        for query, coverage in expected.items():
            hits = searcher.search(query, mode=mode, k=3).results
            assert hits, query
            for hit in hits:
                name = hit.path.rsplit("/", 1)[-1]
                assert hit.term_coverage == pytest.approx(coverage.get(name, 0.0), abs=1e-6)
                assert hit.similarity is not None  # every mode: the label needs it
                evidence = MatchEvidence(hit.similarity, hit.term_coverage, first=hit.rank == 1)
                assert hit.match == match_label(evidence)
        # No term of the query is in the index and nothing is near: none, in every mode.
        for hit in searcher.search(NONSENSE, mode=mode, k=3).results:
            assert hit.term_coverage == 0.0 and hit.match == "none", hit
        # The words of a passage, as its query: strong.
        top = searcher.search(TEXTS["bread.txt"], mode=mode, k=1).results[0]
        assert top.path.endswith("bread.txt") and top.match == "strong"


def test_the_labels_follow_the_thresholds():
    t = THRESHOLDS
    below = -1e-6
    assert match_label(MatchEvidence(t.strong_similarity, 0.0)) == "strong"
    assert match_label(MatchEvidence(t.strong_similarity + below, 0.0)) == "weak"
    with_terms = MatchEvidence(t.strong_similarity_with_terms, t.strong_coverage)
    assert match_label(with_terms) == "strong"
    fewer_terms = MatchEvidence(t.strong_similarity_with_terms, t.strong_coverage + below)
    assert match_label(fewer_terms) == "weak"
    assert match_label(MatchEvidence(t.none_similarity + below, 0.0)) == "none"
    assert match_label(MatchEvidence(t.none_similarity, t.none_coverage)) == "weak"
    assert match_label(MatchEvidence(t.none_similarity + below, t.none_coverage)) == "weak"
    assert match_label(MatchEvidence(None, 0.0)) == "none"  # no contextual space
    # Not one of the query's terms: none up to a higher similarity.
    without_terms = t.none_similarity_without_terms
    assert match_label(MatchEvidence(without_terms + below, 0.0)) == "none"
    assert match_label(MatchEvidence(without_terms + below, 1e-6)) in ("weak", "none")
    assert match_label(MatchEvidence(without_terms, 0.0)) in ("weak", "strong")


def test_after_the_first_hit_only_a_higher_similarity_is_strong():
    """Readers judged the second and third hits of a good search related more often than
    answers (docs/reports/2026-12-06-match-label.md): the lexical evidence makes only the
    first hit `strong`, and any other needs `strong_similarity_after_first`."""
    t = THRESHOLDS
    below = -1e-6
    assert t.strong_similarity < t.strong_similarity_after_first
    later = {"first": False}
    with_terms = (t.strong_similarity_with_terms, t.strong_coverage)
    assert match_label(MatchEvidence(*with_terms)) == "strong"
    assert match_label(MatchEvidence(*with_terms, **later)) == "weak"
    assert match_label(MatchEvidence(t.strong_similarity, 1.0, **later)) == "weak"
    after_first = t.strong_similarity_after_first
    assert match_label(MatchEvidence(after_first + below, 1.0, **later)) == "weak"
    assert match_label(MatchEvidence(after_first, 0.0, **later)) == "strong"
    assert match_label(MatchEvidence(after_first, 1.0, content=False, **later)) == "none"
    # what decides none is the same for every hit
    for first in (True, False):
        assert match_label(MatchEvidence(t.none_similarity + below, 0.0, first=first)) == "none"


@pytest.mark.parametrize(
    ("similarity", "shown"),
    [
        (0.298, "0.29"),
        (0.3, "0.30"),
        (0.29, "0.29"),
        (0.999999, "0.99"),
        (-0.001, "-0.01"),
        (1.0, "1.00"),
        (None, ""),
    ],
)
def test_a_similarity_is_shown_rounded_down(similarity, shown):
    assert shown_similarity(similarity) == shown


def table_rows(output: str) -> list[tuple[str, str, str]]:
    """(sim, match, path) of each hit row of `ctxsearch query`'s table."""
    row = re.compile(r"^\s*\d+\s+-?\d+\.\d+\s+(-?\d\.\d\d)\s+(?:(strong|weak|none)\s+)?(\S+)", re.M)
    return row.findall(output)


def test_a_hit_shown_at_a_similarity_is_kept_by_that_minimum(tmp_path, fast_model):
    folder = tmp_path / "notes"
    folder.mkdir()
    words = ["otters", "river", "reeds", "fish", "meadow", "spring", "bread", "dough", "rise"]
    for number in range(30):  # passages sharing more or fewer words with the query
        text = " ".join(words[(number + step * 3) % len(words)] for step in range(number % 7 + 2))
        (folder / f"note{number:02d}.txt").write_text(text + "\n")
    index = tmp_path / "index"
    Indexer(index, model=fast_model).index_folder(folder)
    runner = CliRunner()
    query = ["query", "otters by the river in spring", "--index", str(index), "-k", "30"]
    listed = table_rows(runner.invoke(cli, query, catch_exceptions=False).output)
    payload = json.loads(runner.invoke(cli, [*query, "--json"], catch_exceptions=False).stdout)
    exact = {hit["path"].rsplit("/", 1)[-1]: hit["similarity"] for hit in payload["results"]}
    rounded_up = [value for value in exact.values() if f"{value:.2f}" != shown_similarity(value)]
    assert rounded_up, "the corpus has a similarity that plain rounding would show higher"
    for sim, _match, path in listed:
        kept = runner.invoke(cli, [*query, "--min-similarity", sim], catch_exceptions=False)
        assert path in [row[2] for row in table_rows(kept.output)], (sim, path)
    # The JSON's six digits: a cut at a hit's shown similarity keeps it, whichever way the
    # raw cosine was rounded.
    with Searcher(index) as searcher:
        for hit in searcher.search("otters by the river in spring", k=30).results:
            again = searcher.search(
                "otters by the river in spring", k=30, min_similarity=hit.similarity
            ).results
            assert hit.path in {other.path for other in again}, hit.similarity
            assert math.isclose(min(other.similarity for other in again), hit.similarity)


def test_nonsense_is_none_and_a_question_s_answer_strong_with_the_real_model(sample_index):
    with Searcher(sample_index) as searcher:
        for mode in MODES:  # lexical mode finds no passage holding any of the words
            nonsense = searcher.search(NONSENSE, mode=mode, k=5).results
            assert [hit.match for hit in nonsense] == ["none"] * (mode != "lexical") * 5, mode
        answer = searcher.search("where do I open a savings account at the bank", k=1).results[0]
        assert answer.path == str(SAMPLE_CORPUS / "finance" / "savings-accounts.md")
        assert answer.match == "strong"


def test_the_json_of_the_cli_and_the_http_api_carry_match(sample_index, sample_server):
    query = ["query", NONSENSE, "--index", str(sample_index), "-k", "3", "--json"]
    printed = json.loads(CliRunner().invoke(cli, query, catch_exceptions=False).stdout)
    answered = httpx.get(f"{sample_server.url}/search", params={"q": NONSENSE, "k": 3}).json()
    for payload in (printed, answered):
        assert [hit["match"] for hit in payload["results"]] == ["none"] * 3
        assert all(hit["term_coverage"] == 0.0 for hit in payload["results"])
    table = CliRunner().invoke(cli, query[:-1], catch_exceptions=False).output
    assert [row[1] for row in table_rows(table)] == ["none"] * 3


STOP_WORD_QUERIES = ("the of and to is", "what is it", "how do I do this", "and or but if")


@pytest.mark.parametrize("mode", MODES)
def test_a_query_of_stop_words_only_has_no_strong_or_weak_hit(word_index, mode):
    """Stop words are no evidence: the lexical side and the snippets still look for them
    (there is nothing else to look for), but no hit of such a query is labelled a match,
    however many of them the passage holds or however near its vector is."""
    with Searcher(word_index) as searcher:
        for query in STOP_WORD_QUERIES:
            hits = searcher.search(query, mode=mode, k=3).results
            assert [hit.match for hit in hits] == ["none"] * len(hits), (query, hits)


def test_the_rule_for_a_query_without_a_content_word():
    for similarity, coverage in ((1.0, 1.0), (0.9, 0.0), (0.2, 1.0)):
        assert match_label(MatchEvidence(similarity, coverage, content=False)) == "none"
        assert match_label(MatchEvidence(similarity, coverage)) != "none" or similarity < 0.5
