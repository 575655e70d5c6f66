"""`ctxsearch index A B FILE`: several folders and files in one command, a summary each;
a bad path among them changes nothing."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from search.cli import cli


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def places(tmp_path, monkeypatch) -> Path:
    """notes/ and papers/ (a file each), loose/todo.md beside loose/other.md; the working
    directory is their parent, so paths are shown as given."""
    for name, text in (
        ("notes/otters.md", "# Otters\n\nOtters dive for fish.\n"),
        ("papers/herons.txt", "Herons stand still in the river.\n"),
        ("loose/todo.md", "# Todo\n\nBuy bread and feed the cat.\n"),
        ("loose/other.md", "Sparrows nest under the roof.\n"),
    ):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def index(*args, model=None):
    extra = ("--model", model) if model else ()
    result = invoke("index", *args, "--index", "ix", *extra)
    assert "Traceback" not in result.output
    return result


def lexical(words: str) -> list[str]:
    result = invoke("query", words, "--index", "ix", "--mode", "lexical", "--format", "paths")
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def test_two_folders_and_a_file_each_with_its_summary(places, fast_model):
    result = index("notes", "papers", "loose/todo.md", model=fast_model)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split(": ")[0] for line in lines] == ["notes", "papers", "loose/todo.md"]
    assert all(": 1 added, 0 updated, 0 removed" in line for line in lines)
    assert lines[-1].endswith("The index holds 3 documents, 3 chunks.")
    assert lexical("sparrows") == []  # the file's siblings stay out
    listed = json.loads(invoke("ls", "--index", "ix", "--json").stdout)
    assert {Path(row["root"]).name: row["documents"] for row in listed} == {
        "notes": 1,
        "papers": 1,
        "todo.md": 1,
    }
    again = json.loads(index("notes", "papers", "loose/todo.md", "--json").stdout)
    assert [Path(summary["path"]).name for summary in again] == ["notes", "papers", "todo.md"]
    assert [summary["unchanged"] for summary in again] == [1, 1, 1]


def test_re_indexing_sees_the_file_roots_edit_and_removal(places, fast_model):
    assert index("notes", "loose/todo.md", model=fast_model).exit_code == 0
    (places / "loose/todo.md").write_text("# Todo\n\nWalk the dog.\n")
    edited = index("notes", "loose/todo.md")
    assert "loose/todo.md: 0 added, 1 updated, 0 removed" in edited.stdout
    assert lexical("dog") == ["loose/todo.md"] and lexical("bread") == []
    (places / "loose/todo.md").unlink()
    removed = index("notes", "loose/todo.md")
    assert removed.exit_code == 0, removed.output
    assert "loose/todo.md: the file is gone: its document left the index" in removed.stdout
    assert "loose/todo.md: 0 added, 0 updated, 1 removed" in removed.stdout
    assert lexical("dog") == []


def test_a_file_inside_a_folder_given_or_indexed_is_that_folders(places, fast_model):
    both = index("loose/todo.md", "loose", model=fast_model)  # the folder runs first
    assert both.exit_code == 0, both.output
    assert "loose/todo.md: under the indexed folder loose, which holds it" in both.stdout
    assert "loose: 2 added" in both.stdout
    alone = index("loose/other.md")
    assert alone.stdout.startswith("loose/other.md: under the indexed folder loose")
    assert json.loads(invoke("info", "--index", "ix", "--json").stdout)["documents"] == 2


def test_a_bad_path_among_several_is_one_line_and_nothing_is_written(places, fast_model):
    result = index("notes", "papers/herons.txt", "nope", model=fast_model)
    assert result.exit_code == 2
    assert result.stderr.strip() == "Error: nope: no such file or folder"
    assert not (places / "ix").exists()


def test_folder_rules_with_only_files_are_a_usage_error(places, fast_model):
    result = index("loose/todo.md", "--exclude", "*.txt", model=fast_model)
    assert result.exit_code == 2
    assert "apply to folders, not to a file given on its own" in result.stderr
    assert not (places / "ix").exists()
