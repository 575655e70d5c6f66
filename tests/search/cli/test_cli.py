"""The command line, through click's CliRunner: exit codes, JSON and error lines."""

import json
import os
import signal
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from search.cli import cli
from tests.conftest import ROOT

SUMMARY_KEYS = {"added", "updated", "removed", "unchanged", "failed", "chunks"}


@pytest.fixture
def runner():
    return CliRunner()


def invoke(runner, *args, env=None):
    return runner.invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


def test_index_json_summary_then_an_unchanged_second_run(runner, tmp_path, notes):
    first = invoke(runner, "index", notes, "--index", tmp_path / "ix", "--json")
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert summary.keys() >= SUMMARY_KEYS
    assert summary["added"] == 4 and summary["chunks"] == 4
    second = json.loads(invoke(runner, "index", notes, "--index", tmp_path / "ix", "--json").stdout)
    assert (second["added"], second["updated"], second["chunks"], second["unchanged"]) == (
        0,
        0,
        0,
        4,
    )


def test_index_and_records_report_the_passages_encoded(runner, tmp_path, notes, tiny_model_dir):
    """Issue 26 item 2: `encoded` (the passages run through the model) beside `chunks`
    (those written), in `index --json`, its summary line and the records summary."""
    import shutil

    index = tmp_path / "ix"
    model = ("--model", tiny_model_dir)
    first = json.loads(invoke(runner, "index", notes, "--index", index, *model, "--json").stdout)
    assert first["chunks"] == first["encoded"] == 4
    shutil.copy(notes / "money.txt", notes / "money-copy.txt")
    copied = invoke(runner, "index", notes, "--index", index)
    assert copied.exit_code == 0, copied.output
    assert "1 added, 0 updated" in copied.stdout and "; 1 chunks (0 encoded) in " in copied.stdout
    kb = tmp_path / "kb.jsonl"
    kb.write_text('{"id": "a", "text": "Otters dive for fish in the cold river."}\n')
    upsert = ("index", "--jsonl", kb, "--index", index)
    assert json.loads(invoke(runner, *upsert, "--json").stdout)["encoded"] == 1
    kb.write_text('{"id": "b", "text": "Otters dive for fish in the cold river."}\n')
    same_text = json.loads(invoke(runner, *upsert, "--json").stdout)
    assert (same_text["added"], same_text["chunks"], same_text["encoded"]) == (1, 1, 0)
    line = invoke(runner, *upsert).stdout
    assert "1 unchanged; 0 chunks (0 encoded) in " in line


def test_query_json_shape(runner, sample_index):
    result = invoke(
        runner,
        "query",
        "the python swallowed its prey",
        "--index",
        sample_index,
        "-k",
        "3",
        "--json",
    )
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["query"] == "the python swallowed its prey"
    assert [hit["rank"] for hit in payload["results"]] == [1, 2, 3]
    for hit in payload["results"]:
        assert {"rank", "score", "path", "start", "end", "snippet"} <= hit.keys()
    assert payload["results"][0]["path"].endswith("nature/pythons-constrictors.md")
    scores = [hit["score"] for hit in payload["results"]]
    assert scores == sorted(scores, reverse=True)


def test_query_shows_one_hit_per_document_unless_asked(runner, sample_index):
    def paths(*extra):
        result = invoke(
            runner,
            "query",
            "how airplanes bank and turn",
            "--index",
            sample_index,
            "-k",
            "20",
            "--json",
            *extra,
        )
        return [hit["path"] for hit in json.loads(result.stdout)["results"]]

    assert len(paths()) == len(set(paths()))
    assert len(paths("--all-chunks")) > len(set(paths("--all-chunks")))


def test_query_static_space_and_human_table(runner, sample_index):
    result = invoke(
        runner, "query", "tower crane", "--index", sample_index, "--space", "static", "-k", "2"
    )
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["#", "score", "sim", "match", "location"]
    assert lines[1].split()[0] == "1" and "construction/" in result.stdout
    location = next(word for word in lines[1].split() if "construction/" in word)
    assert location.rsplit(":", 1)[1].isdigit()  # path:line
    assert lines[1].split()[3] in ("strong", "weak", "none")  # sim and match: every mode


def test_query_vimgrep_lines_open_at_the_hit(runner, sample_index):
    result = invoke(
        runner, "query", "apple pie filling", "--index", sample_index, "--format", "vimgrep"
    )
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 10
    for line in lines:
        path, number, column, text = line.split(":", 3)
        assert (ROOT / path).is_file() and int(number) >= 1 and column == "1" and text
    found = invoke(runner, "query", "apple pie filling", "--index", sample_index, "--json")
    hits = json.loads(found.stdout)["results"]
    for line, hit in zip(lines, hits, strict=True):  # each opens at its hit's matching line
        _path, number, _column, text = line.split(":", 3)
        assert hit["line"] <= int(number) == hit["match_line"] <= hit["end_line"]
        assert text.split()[1] in hit["snippet"]


def test_query_filters_and_min_similarity_on_the_command_line(runner, sample_index, monkeypatch):
    monkeypatch.chdir(ROOT)
    args = ["query", "bank", "--index", sample_index, "-k", "5", "--json"]
    result = invoke(runner, *args, "--under", "sample_corpus/finance", "--type", "md")
    hits = json.loads(result.stdout)["results"]
    assert len(hits) == 3  # the finance folder holds three Markdown files
    assert all("/sample_corpus/finance/" in hit["path"] for hit in hits)
    assert all(hit["path"].endswith(".md") and hit["similarity"] > 0 for hit in hits)
    weak = ["query", "kubernetes pod autoscaling manifest", "--index", sample_index]
    shown = json.loads(invoke(runner, *weak, "--json").stdout)["results"]
    assert shown and max(hit["similarity"] for hit in shown) < 0.3
    dropped = invoke(runner, *weak, "--min-similarity", "0.3")
    assert dropped.exit_code == 0 and dropped.stdout.startswith("No results")
    strong = json.loads(
        invoke(runner, "query", "tower cranes", "--index", sample_index, "--json",
               "--min-similarity", "0.3", "--mode", "lexical").stdout
    )["results"]  # fmt: skip
    assert strong and all(hit["similarity"] >= 0.3 for hit in strong)


def test_default_index_comes_from_the_environment(runner, tmp_path, notes):
    env = {"CTXSEARCH_INDEX": str(tmp_path / "env-ix")}
    assert invoke(runner, "index", notes, "--quiet", env=env).exit_code == 0
    result = invoke(runner, "query", "tower cranes lift steel", "--json", env=env)
    assert json.loads(result.stdout)["results"][0]["path"].endswith("page.html")
    assert (tmp_path / "env-ix" / "ctxsearch.sqlite").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["query", "   "], "query is empty"),
        (["query", "bank", "-k", "0"], "k must be a positive"),
        (["query", "bank", "--space", "sparse"], "Invalid value for '--space'"),
        (["query", "bank", "--dense-weight", "1.5"], "Invalid value for '--dense-weight'"),
        (["query", "bank", "--mode", "static", "--dense-weight", "0.5"], "only applies to hybrid"),
        (["index", "{missing}"], "no such file or folder"),
        (["index", "{notes}", "{blob}"], "file.bin: not a format ctxsearch reads"),
        (["index", "{notes}", "--pooling", "average"], "unknown pooling"),
        (["index", "{notes}", "--pooling", "cls"], "built with mean pooling"),
        (["query", "bank", "--where", "year>>2"], "unknown operator '>>'"),
        (["index", "--records", "{noid}"], "noid.csv line 1: no id column"),
        (["index", "--records", "{empty}"], "empty.jsonl: no records in the file"),
    ],
)
def test_usage_mistakes_exit_2_with_one_line(runner, sample_index, tmp_path, notes, args, message):
    (tmp_path / "file.bin").write_bytes(b"x")
    (tmp_path / "noid.csv").write_text("key,text\n1,otters\n")
    (tmp_path / "empty.jsonl").write_text("")
    values = {"missing": tmp_path / "missing", "blob": tmp_path / "file.bin", "notes": notes}
    values |= {"noid": tmp_path / "noid.csv", "empty": tmp_path / "empty.jsonl"}
    args = [a.format(**values) for a in args] + ["--index", str(sample_index)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output + result.stderr
    if "Invalid value for" not in message:  # click's own: its usage lines help there
        # what the input holds is wrong, not how the command is written: one line only
        [line] = result.stderr.strip().splitlines()
        assert line.startswith("Error: ")


def test_a_missing_or_foreign_index_is_a_clear_error(runner, tmp_path):
    result = runner.invoke(cli, ["query", "bank", "--index", str(tmp_path / "none")])
    assert result.exit_code == 2 and "no index here" in result.stderr
    (tmp_path / "plain").mkdir()
    result = runner.invoke(cli, ["info", "--index", str(tmp_path / "plain")])
    assert result.exit_code == 2 and "not a ctxsearch index" in result.stderr


def test_a_corrupt_index_fails_with_exit_1(runner, tmp_path):
    (tmp_path / "ix").mkdir()
    (tmp_path / "ix" / "ctxsearch.sqlite").write_bytes(b"garbage" * 200)
    result = runner.invoke(cli, ["info", "--index", str(tmp_path / "ix")])
    assert result.exit_code == 1 and "not a readable SQLite database" in result.stderr


def test_info_prints_the_manifest_and_counts(runner, sample_index):
    payload = json.loads(invoke(runner, "info", "--index", sample_index, "--json").stdout)
    assert payload["manifest"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert payload["manifest"]["pooling"] == "mean" and payload["manifest"]["dim"] == 384
    assert payload["documents"] >= 40 and payload["chunks"] >= payload["documents"]


def test_help_and_info_never_import_torch_faiss_sqlalchemy_or_the_server(sample_index):
    code = """
import sys
from search.cli import cli
for args in (["--help"], ["info", "--index", sys.argv[1]]):
    try:
        cli(args)
    except SystemExit as done:
        assert done.code == 0
heavy = {"torch", "faiss", "sqlalchemy", "transformers", "fastapi", "uvicorn", "httpx", "lab"}
heavy &= set(sys.modules)
assert not heavy, heavy
"""
    subprocess.run(
        [sys.executable, "-c", code, str(sample_index)], check=True, cwd=ROOT, capture_output=True
    )


def test_every_command_has_help_with_examples(runner):
    context = click.Context(cli)
    commands = [([name], cli.get_command(context, name)) for name in cli.list_commands(context)]
    for path, command in commands:
        if isinstance(command, click.Group):
            commands += [([*path, sub], command.commands[sub]) for sub in command.commands]
        result = invoke(runner, *path, "--help")
        assert result.exit_code == 0
        assert "Examples:" in result.stdout, f"{' '.join(path)} --help has no examples"
        assert command.help


def test_a_reader_that_leaves_the_pipe_early_gets_no_error(sample_index):
    """`ctxsearch query ... | head -1`: when the reader has gone, the command stops quietly
    (exit 141, as for SIGPIPE), with no "Error: Broken pipe"."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader left before the answer was written
    command = [sys.executable, "-m", "search", "query", "bank", "--index", str(sample_index)]
    run = subprocess.run(
        [*command, "--mode", "lexical", "--json"],
        cwd=ROOT,
        stdout=write_end,
        stderr=subprocess.PIPE,
        timeout=120,
    )
    os.close(write_end)
    assert run.stderr == b"", run.stderr
    assert run.returncode == 141


@pytest.mark.parametrize("point", ["after-scan", "before-publish"])
def test_a_ctrl_c_during_index_ends_in_one_line_with_the_shells_code(tmp_path, fast_model, point):
    """click's own answer to a Ctrl-C was `Aborted!` and exit 1; the run's state is the
    crash tests' (tests/reliability/test_crash_safety.py)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water and wait for fish.")
    command = [sys.executable, "-m", "search", "index", str(docs), "--index", str(tmp_path / "ix")]
    run = subprocess.run(
        [*command, "--model", fast_model, "--quiet"],
        cwd=ROOT,
        env={**os.environ, "CTXSEARCH_SIGINT_AT": point},
        capture_output=True,
        text=True,
        timeout=300,
        # as started from a terminal: a suite run in the background (`make test &`)
        # passes SIGINT on ignored, and a process that inherits that keeps ignoring it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert run.returncode == 130, run.stderr
    assert run.stderr.splitlines()[-1] == "ctxsearch: interrupted", run.stderr
    assert "Aborted" not in run.stderr and "Traceback" not in run.stderr
