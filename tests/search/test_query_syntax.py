"""The query syntax (search.query_syntax): `"a phrase"` must be in the passage, `-word`
must not, in every mode and at every edge, on both stores."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import pytest
from click.testing import CliRunner

from indexer.errors import InvalidQuery
from indexer.runs.indexer import Indexer
from indexer.store.word_filter import WordFilter
from search.cli.main import cli
from search.engine import Searcher
from search.modes import MODES
from search.query_syntax import QueryText, read_query
from tests.support.mcp_client import stdio_session
from tests.support.serving import running_server


@pytest.mark.parametrize(
    ("query", "searched", "phrases", "excluded"),
    [
        ('"hinted handoff"', "hinted handoff", ("hinted handoff",), ()),
        ('dynamo "hinted   handoff" -paxos', "dynamo hinted handoff", ("hinted handoff",),
         ("paxos",)),
        ('ProxyFix -"behind a proxy"', "ProxyFix", (), ("behind a proxy",)),
        ("-flask ProxyFix", "ProxyFix", (), ("flask",)),
        # a `-` inside a word, before a digit or alone is text
        ("e-mail co-cultured cells", "e-mail co-cultured cells", (), ()),
        ("below -40 degrees", "below -40 degrees", (), ()),
        ("x - y", "x - y", (), ()),
        # an exclusion runs to the next space: its own hyphens make it a phrase
        ("send -e-mail", "send", (), ("e-mail",)),
        # a quote without its pair is an ordinary character
        ('the 5" screen', 'the 5" screen', (), ()),
        ('"a b" and "c', 'a b and "c', ("a b",), ()),
        # phrases and exclusions with no word are dropped; repeats count once
        ('"" word -"?"', "word", (), ()),
        ('"a b" "a b" -c -c', "a b a b", ("a b",), ("c",)),
    ],
)  # fmt: skip
def test_a_query_is_read_into_what_it_looks_for_and_its_words(query, searched, phrases, excluded):
    read = read_query(query)
    assert read.searched == searched
    assert read.words == WordFilter(phrases, excluded)


def test_a_literal_query_is_read_as_plain_text():
    for query in ('My answer is "Probably Not".', "-flask", '""'):
        assert read_query(query, literal=True) == QueryText(query, WordFilter())


@pytest.mark.parametrize("query", ["-flask", '-flask -"a phrase"', '""', "-x \u200b"])
def test_a_query_with_nothing_to_look_for_is_refused_in_one_line(query):
    with pytest.raises(InvalidQuery, match=r"^nothing to search for in .*add a word or a phrase"):
        read_query(query)


def build(folder, target, fast_model) -> None:
    """40 notes about otters; 12 hold the phrase "sea otter", 6 of those the word kelp."""
    folder.mkdir()
    for n in range(40):
        words = "a sea otter floats" if n < 12 else "an otter by the sea floats"
        kelp = " in kelp" if n < 6 else ""
        (folder / f"{n:02d}.txt").write_text(f"Note {n}: {words}{kelp}, river {n}.\n")
    Indexer(target, model=fast_model).index_folder(folder)


@pytest.mark.parametrize("mode", MODES)
def test_phrases_and_exclusions_filter_every_mode_inside_the_search(
    tmp_path, any_index, fast_model, mode
):
    build(tmp_path / "notes", any_index, fast_model)
    with Searcher(any_index) as searcher:
        phrase = searcher.search('"sea otter" floats', k=10, mode=mode)
        excluding = searcher.search('"sea otter" floats -kelp', k=10, mode=mode)
        everything = searcher.search("sea otter floats -kelp", k=40, mode=mode)
        literal = searcher.search('"sea otter" floats -kelp', k=10, mode=mode, literal=True)
    assert len(phrase.results) == 10  # k hits come when k passages hold the phrase
    assert all("a sea otter" in hit.snippet for hit in phrase.results)
    assert len(excluding.results) == 6  # all that qualify
    assert all("kelp" not in hit.snippet for hit in excluding.results)
    assert len(everything.results) == 34
    assert phrase.query == '"sea otter" floats'
    assert not phrase.hints
    assert phrase.filters["phrases"] == ["sea otter"]
    assert len(literal.results) == 10 and literal.filters is None
    assert excluding.filters["excluded"] == ["kelp"]


def test_a_quoted_phrase_of_chinese_or_japanese_holds_where_its_characters_stand_together(
    tmp_path, any_index, fast_model
):
    """CJK runs are indexed as characters and pairs (`indexer.cjk`): a quoted run holds
    where its characters stand together and in order, on both stores."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "tower.txt").write_text("東京タワーは夜になると明るく光ります。\n")
    (folder / "apart.txt").write_text("東京の古いタワーは夜に光ります。\n")  # apart
    (folder / "temple.txt").write_text("京都の寺は秋の紅葉がきれいです。\n")
    Indexer(any_index, model=fast_model).index_folder(folder)
    with Searcher(any_index) as searcher:

        def found(query: str) -> list[str]:
            return [Path(hit.path).name for hit in searcher.search(query, mode="lexical").results]

        assert found('"東京タワー"') == ["tower.txt"]
        assert found('"紅葉"') == ["temple.txt"]
        assert sorted(found('光ります -"東京タワー"')) == ["apart.txt"]


def test_the_edges_take_the_syntax_and_refuse_a_query_of_exclusions(tmp_path, fast_model):
    target = tmp_path / "ix"
    build(tmp_path / "notes", target, fast_model)
    runner = CliRunner()
    found = runner.invoke(cli, ["query", '"sea otter" -kelp', "--index", str(target), "--json"])
    assert found.exit_code == 0, found.output
    assert len(json.loads(found.stdout)["results"]) == 6
    reversed_words = runner.invoke(cli, ["query", '"otter sea"', "--index", str(target)])
    assert reversed_words.exit_code == 0 and "No results." in reversed_words.stdout
    assert 'hint: no passage holds the phrase "otter sea"' in reversed_words.stderr
    assert "`--literal`) reads quotes as part of the text" in reversed_words.stderr
    pasted = ["query", '"otter sea"', "--literal", "--index", str(target), "--json"]
    assert json.loads(runner.invoke(cli, pasted).stdout)["results"]  # quotes as text
    refused = runner.invoke(cli, ["query", "--index", str(target), "--", "-kelp"])
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "nothing to search for in '-kelp'" in refused.stderr
    with running_server(target, tmp_path / "serve.log") as server:
        search = f"{server.url}/search"
        got = httpx.get(search, params={"q": '"sea otter" -kelp', "k": 20}, timeout=60)
        assert len(got.json()["results"]) == 6
        for bad in (
            httpx.get(search, params={"q": "-kelp"}, timeout=60),
            httpx.post(search, json={"q": '-kelp -"sea otter"'}, timeout=60),
        ):
            assert bad.status_code == 422 and "nothing to search for" in bad.json()["detail"]

    async def session_test() -> None:
        async with stdio_session(target) as session:
            found = await session.call_tool("search", {"query": '"sea otter" -kelp', "k": 20})
            assert len(found.structured_content["results"]) == 6
            bad = await session.call_tool("search", {"query": "-kelp"})
            assert bad.is_error and "nothing to search for" in bad.content[0].text

    anyio.run(session_test)
