"""The lexical space: FTS5 kept in step with the chunks, safe queries, hybrid hits."""

import json

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


def test_chinese_and_japanese_queries_find_their_documents_by_their_words(tmp_path, fast_model):
    """CJK text has no spaces: unicode61 alone makes a clause one token, so a query
    typed in other words found nothing. Its characters and pairs are searchable, and
    each hit's highlights are the characters matched."""
    from tests.support.cjk_corpus import QUERIES, TEXTS, write_corpus

    folder = write_corpus(tmp_path / "cjk")
    Indexer(tmp_path / "ix", model=fast_model).index_folder(folder)
    assert_lexical_consistent(tmp_path / "ix")
    with Searcher(tmp_path / "ix", model=fast_model) as searcher:
        for query, answer in QUERIES.items():
            top = searcher.search(query, mode="lexical", k=3).results[0]
            assert top.path.endswith(answer), query
            marked = [top.snippet[a:b] for a, b in top.highlights]
            pairs = {text[i : i + 2] for text in marked for i in range(len(text) - 1)}
            assert marked and pairs <= set(query_terms(query)), (query, marked)
            # hybrid is no longer the dense side alone: the lexical side found it first
            hybrid = searcher.search(query, mode="hybrid", k=len(TEXTS)).results
            assert [hit.found_by.get("lexical") for hit in hybrid if hit.path == top.path] == [1]
        rain = searcher.search("雨", mode="lexical", k=5).results
        assert {hit.path.rsplit("/", 1)[-1] for hit in rain} == {"ja-bicycle.txt", "ja-typhoon.txt"}
        assert (
            searcher.search("otters river", mode="lexical").results[0].path.endswith("otters.txt")
        )


def test_an_index_from_before_cjk_units_finds_cjk_text_once_opened(tmp_path, fast_model):
    """An index made before migration 0014 indexed CJK clauses whole; opening it
    rewrites its CJK chunks' lexical entries, and it then ranks as an index made afresh."""
    import sqlite3

    from indexer.store.local.fts import LEXICAL_VIEW, SETTINGS, fts_statements
    from indexer.store.local.index_files import DATABASE_FILE
    from tests.support.cjk_corpus import QUERIES, write_corpus

    folder = write_corpus(tmp_path / "cjk")
    Indexer(tmp_path / "old", model=fast_model).index_folder(folder)
    Indexer(tmp_path / "fresh", model=fast_model).index_folder(folder)
    with sqlite3.connect(tmp_path / "old" / DATABASE_FILE) as connection:  # as 0012 left it
        for kind in ("insert", "delete", "update"):
            connection.execute(f"DROP TRIGGER chunks_fts_{kind}")
        connection.execute("DROP TABLE chunks_fts")
        connection.execute(f"DROP VIEW {LEXICAL_VIEW}")
        connection.execute("ALTER TABLE chunks DROP COLUMN indexed_text")
        for statement in fts_statements("chunks"):
            connection.execute(statement)
        connection.execute(
            "DELETE FROM migrations WHERE name IN ('0013_indexed_text', '0014_cjk_units')"
        )
        settings = {key: value for key, value in SETTINGS.items() if key != "cjk"}
        connection.execute(
            "UPDATE manifest SET value = ? WHERE key = 'lexical'", (json.dumps(settings),)
        )
    connection.close()
    with (
        Searcher(tmp_path / "old", model=fast_model) as old,
        Searcher(tmp_path / "fresh", model=fast_model) as fresh,
    ):
        for query in [*QUERIES, "雨", "otters"]:
            found = [(h.path, h.score) for h in old.search(query, mode="lexical").results]
            assert found == [(h.path, h.score) for h in fresh.search(query, mode="lexical").results]
            assert found, query
        assert old.manifest.lexical == SETTINGS
    assert_lexical_consistent(tmp_path / "old")
