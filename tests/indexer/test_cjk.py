"""CJK runs as the lexical space's units: characters and pairs stored, pairs asked."""

from __future__ import annotations

from indexer.cjk import indexed_form, merged, query_form, unit_spans
from indexer.terms import query_terms
from search.match_lines import best_line
from search.snippets import make_snippet


def test_stored_text_holds_each_character_and_pair_of_a_run():
    assert indexed_form("東京都に行く") == " 東 東京 京 京都 都 都に に に行 行 行く く "
    assert indexed_form("Python入門・基礎") == "Python 入 入門 門 ・ 基 基礎 礎 "
    assert indexed_form("otters swim") is None  # indexed as it is


def test_a_query_asks_for_the_pairs_and_a_lone_character_for_itself():
    assert query_terms("東京タワー") == ["東京", "京タ", "タワ", "ワー"]
    assert query_terms("雨") == ["雨"]
    assert query_terms("한국어 문장") == ["한국", "국어", "문장"]
    assert query_terms("the 台風 and the otters") == ["台風", "otters"]
    assert query_form("猫・犬") == " 猫 ・ 犬 "  # the middle dot separates, as in unicode61


def test_unit_spans_point_at_the_characters_of_each_unit():
    text = "in 東京都 now"
    assert [text[a:b] for a, b in unit_spans(text)] == [
        "in", "東", "東京", "京", "京都", "都", "now"
    ]  # fmt: skip
    assert merged([(3, 5), (4, 6), (8, 9), (9, 10), (12, 13)]) == [(3, 6), (8, 10), (12, 13)]


def test_a_snippet_highlights_the_matched_characters():
    text = "去年から自転車で通勤するようになりました。雨の日以外は毎朝走っています。"
    snippet = make_snippet(text, query_terms("自転車通勤"))
    assert [snippet.text[a:b] for a, b in snippet.highlights] == ["自転車", "通勤"]
    snippet = make_snippet(text, query_terms("雨"))
    assert [snippet.text[a:b] for a, b in snippet.highlights] == ["雨"]


def test_the_matched_line_is_the_one_holding_the_query_pairs():
    text = "味噌汁は日本の家庭料理の基本です。\n台風が近づくと、停電になる地域もあります。"
    assert best_line(text, query_terms("台風で停電")).index == 1
