"""`query` and `similar` with `--format paths`, `jsonl` and `link`, through the command line."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from search.cli import cli

BANK = "The bank by the river holds savings. " * 3


def invoke(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, fast_model) -> tuple[Path, Path]:
    """(the index, the folder): a file of many passages on banks, one with a space in its
    name, and one on something else."""
    folder = tmp_path_factory.mktemp("formats") / "notes"
    folder.mkdir()
    (folder / "banks.md").write_text(
        "\n\n".join(f"# Bank {n}\n\n{BANK}{' filler words here' * 40}" for n in range(6))
    )
    (folder / "my savings.txt").write_text("Savings at the bank earn interest by the river.\n")
    (folder / "roses.md").write_text("# Roses\n\nPrune roses in late winter.\n")
    index = folder.parent / "ix"
    result = invoke("index", folder, "--index", index, "--model", fast_model, "-q")
    assert result.exit_code == 0, result.output
    return index, folder


def query(index, *options, env=None):
    args = ("query", "bank river savings", "--index", index, "--mode", "lexical", *options)
    result = invoke(*args, env=env)
    assert result.exit_code == 0, result.output
    return result


def test_paths_are_each_file_once_in_rank_order(indexed, monkeypatch):
    index, folder = indexed
    monkeypatch.chdir(folder)
    hits = json.loads(query(index, "--all-chunks", "--json").stdout)["results"]
    ranked = list(dict.fromkeys(Path(hit["path"]).name for hit in hits))
    assert len(hits) > len(ranked)  # several passages of one file among the hits
    lines = query(index, "--all-chunks", "--format", "paths").stdout.splitlines()
    assert lines == ranked  # relative to the working directory, like the table
    assert "banks.md" in lines and "my savings.txt" in lines


def test_jsonl_lines_are_the_hits_of_json(indexed):
    index, _folder = indexed
    hits = json.loads(query(index, "--all-chunks", "--json").stdout)["results"]
    lines = query(index, "--all-chunks", "--format", "jsonl").stdout.splitlines()
    parsed = [json.loads(line) for line in lines]
    assert [hit.keys() for hit in parsed] == [hit.keys() for hit in hits]
    assert [h["chunk_id"] for h in parsed] == [h["chunk_id"] for h in hits]


def test_jsonl_is_flushed_a_hit_at_a_time_to_a_pipe(indexed):
    """A real process writing to a pipe: each hit is a whole line as it is read."""
    index, _folder = indexed
    command = [sys.executable, "-m", "search", "query", "bank", "--index", str(index)]
    process = subprocess.Popen(
        [*command, "--mode", "lexical", "--format", "jsonl", "-k", "3", "--all-chunks"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    lines = list(process.stdout)
    assert process.wait() == 0
    assert len(lines) == 3 and all(json.loads(line)["rank"] for line in lines)


def test_link_fills_the_template_with_the_absolute_path_and_line(indexed):
    index, folder = indexed
    hits = json.loads(query(index, "--json").stdout)["results"]
    links = query(index, "--format", "link").stdout.splitlines()
    assert len(links) == len(hits)
    savings = next(link for link in links if "savings" in link)
    quoted = str(folder / "my%20savings.txt")
    assert savings == f"vscode://file{quoted}:1"  # the default: a URL, its path quoted
    plain = query(index, "--format", "link", "--link-template", "{path}:{line}:{column}")
    assert f"{folder / 'my savings.txt'}:1:1" in plain.stdout.splitlines()
    from_env = query(index, "--format", "link", env={"CTXSEARCH_LINK_TEMPLATE": "x {line}"})
    assert set(from_env.stdout.splitlines()) <= {f"x {n}" for n in range(1, 100)}


def test_a_link_template_with_an_unknown_field_is_a_usage_error(indexed):
    index, _folder = indexed
    args = ("query", "bank", "--index", index, "--format", "link", "--link-template", "{file}")
    result = invoke(*args)
    assert result.exit_code == 2
    assert "--link-template '{file}': no field {file}" in result.stderr
    assert "Traceback" not in result.output


def test_similar_takes_the_same_formats(indexed, monkeypatch):
    index, folder = indexed
    monkeypatch.chdir(folder)
    item = ("similar", folder / "my savings.txt", "--index", index, "--mode", "static")
    hits = json.loads(invoke(*item, "--json", "--all-chunks").stdout)["results"]
    paths = invoke(*item, "--format", "paths", "--all-chunks").stdout.splitlines()
    assert paths == list(dict.fromkeys(Path(hit["path"]).name for hit in hits))
    jsonl = invoke(*item, "--format", "jsonl", "--all-chunks").stdout.splitlines()
    assert [json.loads(line) for line in jsonl] == hits
    template = ("--format", "link", "--link-template", "{path}", "--all-chunks")
    links = invoke(*item, *template).stdout.splitlines()
    assert links == [hit["path"] for hit in hits]
    both = invoke(*item, "--format", "paths", "--json")
    assert both.exit_code == 2 and "--json and --format paths do not go together" in both.stderr
