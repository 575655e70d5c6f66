"""The lexical space: FTS5 kept in step with the chunks, safe queries, hybrid hits."""

import pytest

from indexer import Indexer
from indexer.store.backends import verify_target
from indexer.store.local.bm25 import match_expression
from indexer.terms import query_terms
from search import Searcher


def assert_lexical_consistent(index_dir):
    """`verify` compares the FTS5 rows with the chunks and runs FTS5's integrity check."""
    report = verify_target(index_dir)
    assert report.consistent, report.problems
    assert report.counts["lexical_entries"] == report.counts["chunks"]


def test_lexical_space_follows_adds_updates_and_deletes(tmp_path, notes):
    Indexer(tmp_path / "ix").index_folder(notes)
    assert_lexical_consistent(tmp_path / "ix")
    with Searcher(tmp_path / "ix") as searcher:
        assert searcher.search("meadow", mode="lexical").results[0].path.endswith("river.txt")

    (notes / "river.txt").write_text("Otters play in the estuary at dawn.\n")
    (notes / "money.txt").unlink()
    (notes / "new.md").write_text("A sourdough starter needs flour and water daily.\n")
    Indexer(tmp_path / "ix").index_folder(notes)
    assert_lexical_consistent(tmp_path / "ix")
    with Searcher(tmp_path / "ix") as searcher:
        assert searcher.search("meadow", mode="lexical").results == []
        assert searcher.search("savings deposit", mode="lexical").results == []
        assert (
            searcher.search("estuary otters", mode="lexical").results[0].path.endswith("river.txt")
        )
        assert searcher.search("sourdough", mode="lexical").results[0].path.endswith("new.md")


def test_stemming_matches_word_forms(sample_index):
    with Searcher(sample_index) as searcher:
        hits = searcher.search("migrating cranes", mode="lexical", k=3).results
    assert any("crane-migration" in hit.path for hit in hits)


@pytest.mark.parametrize(
    "query", ['"unbalanced quote', "NEAR(a b)", "a* OR -b", "col:value", "^start", "AND OR NOT"]
)
def test_fts_syntax_in_queries_is_searched_as_words_not_run(sample_index, query):
    with Searcher(sample_index) as searcher:
        searcher.search(query, mode="lexical")
        searcher.search(query, mode="hybrid")


def test_query_terms_drop_stop_words_unless_nothing_is_left():
    assert query_terms("Where is the bank of the river?") == ["bank", "river"]
    assert query_terms("the of and") == ["the", "of", "and"]
    assert match_expression('say "hi"') == '"say" OR "hi"'
    assert match_expression("?!") is None


def test_hybrid_hits_say_which_spaces_found_them(sample_index):
    with Searcher(sample_index) as searcher:
        response = searcher.search("erosion along the river bank", k=5, mode="hybrid")
    top = response.results[0]
    assert "river-bank-erosion" in top.path
    assert set(top.found_by) <= {"contextual", "lexical"} and top.found_by
    assert all(rank >= 1 for rank in top.found_by.values())
    words = [top.snippet[a:b].lower() for a, b in top.highlights]
    assert words and all(word.startswith(("erosion", "river", "bank")) for word in words)


def test_lexical_mode_encodes_the_query_only_for_its_match_signal(sample_index):
    """Lexical mode ranks by BM25 alone; it loads the contextual encoder (never the static
    one) only to give each hit its `similarity`, and with it `match` (issue 27)."""
    with Searcher(sample_index) as searcher:
        hits = searcher.search("tower crane", mode="lexical").results
        assert set(searcher.encoder_kinds) == {"contextual"}
    assert hits and all(hit.similarity is not None for hit in hits)
    assert {hit.match for hit in hits} <= {"strong", "weak", "none"}
