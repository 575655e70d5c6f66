"""`match_line`: the line inside a hit's passage that best matches the query, in the
file (and within its page for a PDF), and where vimgrep and the table jump."""

from __future__ import annotations

import json

from click.testing import CliRunner

from indexer import Indexer
from search.cli import cli
from search.engine import Searcher
from tests.conftest import make_pdf

NOTE = (
    "Kitchen notes\n"
    "\n"
    "Bread wants a hot oven and a long proof.\n"
    "Soup keeps for three days in the fridge.\n"
    "The otter recipe is a joke about the river.\n"
    "Pancakes need eggs, milk and flour.\n"
)


def _index(tmp_path, tiny_model_dir, files: dict[str, bytes | str]):
    """An index (tiny model) of a folder holding `files`."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, content in files.items():
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    index = tmp_path / "ix"
    Indexer(index, model=str(tiny_model_dir)).index_folder(folder)
    return index


def test_match_line_is_the_line_of_the_passage_that_holds_the_query(tmp_path, tiny_model_dir):
    index = _index(tmp_path, tiny_model_dir, {"kitchen.txt": "\n\n" + NOTE})
    with Searcher(index) as searcher:
        [hit] = searcher.search("otter river", mode="lexical", k=1).results
    assert hit.line == 3  # the passage starts at the title
    assert hit.match_line == 7  # "The otter recipe ... river."
    assert hit.to_dict()["match_line"] == 7


def test_vimgrep_and_the_table_jump_to_the_matching_line(tmp_path, tiny_model_dir):
    index = _index(tmp_path, tiny_model_dir, {"kitchen.txt": NOTE})
    args = ["query", "pancakes flour", "--index", str(index), "--mode", "lexical", "-k", "1"]
    vimgrep = CliRunner().invoke(cli, [*args, "--format", "vimgrep"], catch_exceptions=False)
    path, line, column, _text = vimgrep.stdout.strip().split(":", 3)
    assert (path.endswith("kitchen.txt"), line, column) == (True, "6", "1")
    table = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert "kitchen.txt:6" in table.stdout
    shown = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)["results"][0]
    assert (shown["line"], shown["match_line"]) == (1, 6)


def test_a_pdf_hit_gives_its_page_and_the_line_within_it(tmp_path, tiny_model_dir):
    pdf = make_pdf(["Safety rules", "Wear a helmet on site.", "Tower cranes stop in high wind."])
    index = _index(tmp_path, tiny_model_dir, {"rules.pdf": pdf})
    with Searcher(index) as searcher:
        [hit] = searcher.search("cranes wind", mode="lexical", k=1).results
    assert (hit.page, hit.line) == (1, None)
    assert (hit.match_page, hit.match_page_line, hit.match_line) == (1, 3, None)
    args = ["query", "cranes wind", "--index", str(index), "--mode", "lexical", "-k", "1"]
    vimgrep = CliRunner().invoke(cli, [*args, "--format", "vimgrep"], catch_exceptions=False)
    _path, line, column, text = vimgrep.stdout.strip().split(":", 3)
    assert (line, column, text.startswith("[page 1]")) == ("3", "1", True)
    table = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert "rules.pdf (page 1, line 3)" in table.stdout


def test_an_html_hit_names_the_source_line_of_its_matching_text(tmp_path, tiny_model_dir):
    page = (
        "<html><body>\n<h1>Garden</h1>\n<p>Roses want sun.</p>\n\n"
        "<p>Tomatoes want\nwater every evening.</p>\n</body></html>\n"
    )
    index = _index(tmp_path, tiny_model_dir, {"garden.html": page})
    with Searcher(index) as searcher:
        [hit] = searcher.search("water evening", mode="lexical", k=1).results
    assert hit.match_line == 6  # "water every evening." sits on the page's sixth line


def test_an_html_title_hit_names_the_title_elements_line(tmp_path, tiny_model_dir):
    page = (
        '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">\n'
        "<title>Heron migration</title>\n</head>\n<body>\n<p>Roses want sun.</p>\n"
        "</body>\n</html>\n"
    )
    index = _index(tmp_path, tiny_model_dir, {"birds.html": page})
    with Searcher(index) as searcher:
        [hit] = searcher.search("heron migration", mode="lexical", k=1).results
    assert hit.match_line == 5  # the <title> element's line, not <head>'s
    args = ["query", "heron migration", "--index", str(index), "--mode", "lexical", "-k", "1"]
    vimgrep = CliRunner().invoke(cli, [*args, "--format", "vimgrep"], catch_exceptions=False)
    assert vimgrep.stdout.split(":")[1] == "5"


def test_the_rarer_query_word_decides_between_lines():
    from search.match_lines import best_line

    text = "the bank of the river\nthe bank opens at nine\nthe river bank heron nests"
    assert best_line(text, ["bank", "heron"], method="lexical").index == 2
    # no line holds a query word: the similarity decides
    assert best_line("alpha\nbeta\ngamma", ["zeta"], lambda lines: [0, 0.9, 0.1]).index == 1


def test_the_static_space_picks_the_line_closest_in_meaning(tmp_path, model):
    """No line holds a query word: in static mode the real model's token table decides
    (in the other modes the earliest line would)."""
    text = "Invoices are due at the end of the month.\nThe cat slept on the warm windowsill."
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "mixed.txt").write_text(text)
    index = tmp_path / "ix"
    Indexer(index).index_folder(folder)
    with Searcher(index) as searcher:
        [hit] = searcher.search("kitten napping in the sunshine", mode="static", k=1).results
        assert hit.match_line == 2
        [hit] = searcher.search("kitten napping in the sunshine", mode="contextual", k=1).results
        assert hit.match_line == 1


def test_the_line_map_counts_lines_from_the_top_of_each_page():
    from indexer.reading.text_layout import Layout, Locator

    text = "p1a\np1b\n\np2a\np2b"
    pdf = Locator(text, "pdf", Layout(pages=[(0, 1), (9, 2)]))
    assert pdf.line_map(5, len(text)) == [[1, 2], [1, 3], [2, 1], [2, 2]]
    html = Locator("a\nb\nc", "html", Layout(lines=[(0, 3), (2, 3), (4, 7)]))
    assert html.line_map(0, 5) == [3, 3, 7]  # "a" and "b" share source line 3
    assert Locator("a\nb", "text").line_map(0, 3) is None  # counted from `line` instead


def test_words_joined_by_underscores_count_as_the_query_words_they_hold(tmp_path, tiny_model_dir):
    """`sort_keys=True` holds "sort" and "keys" (the lexical space splits at underscores
    too): the line that sets it beats an earlier line that only mentions keys."""
    from search.match_lines import best_line

    text = "Keys are written in insertion order.\njson.dumps(data, sort_keys=True, indent=4)"
    assert best_line(text, ["sort", "keys"], method="lexical").index == 1
    assert best_line(text, ["sort_keys"], method="lexical").index == 1  # the query's, too
    index = _index(tmp_path, tiny_model_dir, {"json.txt": text + "\n"})
    with Searcher(index) as searcher:
        [hit] = searcher.search("sort keys", mode="lexical", k=1).results
    assert (hit.line, hit.match_line) == (1, 2)
