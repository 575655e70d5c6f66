"""Hints instead of silence: a filter that cannot match anything in the index says why,
on stderr (`hint: ...`) and in the JSON (`hints`), exit 0; and `query -` reads stdin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from search.cli import cli
from search.engine import Searcher
from tests.support.hint_corpus import make_hint_index


@pytest.fixture(scope="module")
def records_index(tmp_path_factory, tiny_model_dir) -> tuple[Path, Path]:
    """Notes (md, txt) and two records (`tests.support.hint_corpus`)."""
    return make_hint_index(tmp_path_factory.mktemp("hints"), tiny_model_dir)


def run(*args: object, input: str | None = None):
    result = CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)
    return result


def hint_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("hint: ")]


def test_an_under_folder_outside_every_root_names_the_roots(records_index):
    index, folder = records_index
    result = run("query", "otters", "--index", index, "--mode", "lexical", "--under", "/nope")
    assert result.exit_code == 0
    assert "No results." in result.stdout
    assert hint_lines(result.stderr) == [
        f"hint: nothing indexed is under /nope; the indexed folders are {folder}"
    ]
    payload = json.loads(
        run("query", "otters", "--index", index, "--under", "/nope", "--json").stdout
    )
    assert payload["results"] == []
    assert payload["hints"] == [f"nothing indexed is under /nope; the indexed folders are {folder}"]


def test_a_type_no_file_has_lists_the_types_there_are(records_index):
    index, _folder = records_index
    result = run("query", "otters", "--index", index, "--mode", "lexical", "--type", "bogus")
    assert result.exit_code == 0
    assert hint_lines(result.stderr) == [
        "hint: no indexed file is of type bogus; the types here are md, txt"
    ]


@pytest.mark.parametrize(
    ("glob", "hint"),
    [
        ("*.mdx", "; the types here are md, txt"),
        ("notes/", "; notes/* matches"),
        ("notes", "; notes/* matches"),
        ("otter", "; *otter* matches"),
        ("*.MD", "; *.md matches"),
    ],
)
def test_a_path_glob_that_matches_nothing_says_what_would(records_index, glob, hint):
    index, _folder = records_index
    result = run("query", "otters", "--index", index, "--mode", "lexical", "--path", glob)
    assert result.exit_code == 0 and "No results." in result.stdout
    assert hint_lines(result.stderr) == [
        f"hint: no indexed path matches the glob {glob} (without a / it matches file names, "
        f"with one the end of the path; * also crosses folders){hint}"
    ]


def test_a_where_key_no_record_has_lists_the_keys(records_index):
    index, _folder = records_index
    result = run("query", "otters", "--index", index, "--mode", "lexical", "--where", "year=1")
    assert result.exit_code == 0
    assert hint_lines(result.stderr) == [
        "hint: where year=1: no record has the metadata key year; the keys are lang, public"
    ]


@pytest.mark.parametrize(
    ("pair", "hint"),
    [
        ("public=True", "where public=True: no record has that value; records hold public=true"),
        ("lang=EN", "where lang=EN: no record has that value; records hold lang=en"),
        ("lang=de", "where lang=de: no record has that value"),
    ],
)
def test_a_where_value_that_differs_in_case_says_which_would_match(records_index, pair, hint):
    index, _folder = records_index
    result = run("query", "kettles", "--index", index, "--mode", "lexical", "--where", pair)
    assert result.exit_code == 0
    assert hint_lines(result.stderr) == [f"hint: {hint}"]
    payload = json.loads(
        run("query", "kettles", "--index", index, "--where", pair, "--json").stdout
    )
    assert payload["hints"] == [hint]


def test_where_on_an_index_without_records_says_so(sample_index):
    result = run("query", "pythons", "--index", sample_index, "--where", "lang=en", "--json")
    assert result.exit_code == 0
    hint = "where lang=en: this index holds no records (only records have metadata)"
    assert json.loads(result.stdout)["hints"] == [hint]
    assert hint_lines(result.stderr) == [f"hint: {hint}"]


def test_a_query_with_results_has_no_hints(records_index):
    index, folder = records_index
    result = run("query", "otters", "--index", index, "--under", folder, "--json")
    payload = json.loads(result.stdout)
    assert payload["results"] and payload["hints"] == []
    assert hint_lines(result.stderr) == []


def test_the_python_response_carries_the_hints(records_index):
    index, _folder = records_index
    with Searcher(index) as searcher:
        response = searcher.search("otters", file_type="bogus", mode="lexical")
    assert response.hints == ["no indexed file is of type bogus; the types here are md, txt"]
    assert response.to_dict()["hints"] == response.hints


def test_query_dash_reads_the_query_from_standard_input(records_index):
    index, _folder = records_index
    result = run("query", "-", "--index", index, "--mode", "lexical", "--json", input="otters\n")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["query"] == "otters" and payload["results"]


def test_query_dash_with_empty_input_is_a_usage_error(records_index):
    index, _folder = records_index
    result = run("query", "-", "--index", index, input="  \n")
    assert result.exit_code == 2
    assert "standard input" in result.stderr


def test_a_root_emptied_since_it_was_indexed_is_said_to_hold_nothing_now(tmp_path, fast_model):
    """A watched folder whose last file went away stays a root: the hint says it holds
    no documents now, and names only the other roots as where documents are."""
    from indexer import Indexer

    notes, empty = tmp_path / "notes", tmp_path / "old" / "drafts"
    for folder in (notes, empty):
        folder.mkdir(parents=True)
        (folder / "otters.txt").write_text("Otters hold hands while they sleep.\n")
    index = tmp_path / "ix"
    indexer = Indexer(index, model=fast_model)
    indexer.index_folder(notes)
    indexer.index_folder(empty)
    (empty / "otters.txt").unlink()
    indexer.index_folder(empty, allow_empty=True)  # as `watch` does
    for under, hint in (
        (empty, f"{empty} is indexed but holds no documents now; the indexed folders "
         f"with documents are {notes}"),
        (empty / "sub", f"nothing indexed is under {empty / 'sub'}; it is inside {empty}, "
         f"which holds no documents now; the indexed folders with documents are {notes}"),
        (tmp_path / "nope", f"nothing indexed is under {tmp_path / 'nope'}; the indexed "
         f"folders with documents are {notes}"),
        (empty.parent, f"nothing indexed is under {empty.parent}; the indexed folders there "
         f"({empty}) hold no documents now; the indexed folders with documents are {notes}"),
    ):  # fmt: skip
        result = run("query", "otters", "--index", index, "--mode", "lexical", "--under", under)
        assert result.exit_code == 0 and "No results." in result.stdout
        assert hint_lines(result.stderr) == [f"hint: {hint}"]
