"""`ctxsearch lab`: the lab's commands as one group of the product's CLI, found through an
entry point; their old top-level names kept as hidden aliases; one line when the lab's
packages are missing; bad input refused before anything runs."""

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from indexer.encoders.hashed import HASHED_MODEL
from lab.cli import lab
from search.cli import cli
from tests.conftest import ROOT

LAB_COMMANDS = {
    "bench", "classify", "eval", "loadtest", "neighbours", "polysemy", "sts", "tune-fusion",
    "wic", "words",
}  # fmt: skip


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output + result.stderr
    return result


def assert_error(result, code: int, message: str):
    assert result.exit_code == code, (result.exit_code, result.output, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(lines) == 1 and message in lines[0], result.stderr


def listed(help_text: str) -> set[str]:
    """The command names a `--help` lists."""
    commands = help_text.split("Commands:", 1)[1]
    return {line.split()[0] for line in commands.splitlines() if line.startswith("  ")}


def test_the_lab_is_one_command_of_the_product_with_its_commands_under_it():
    top = run("--help")
    assert top.exit_code == 0
    assert "lab" in listed(top.stdout) and not LAB_COMMANDS & listed(top.stdout)
    assert {"compare", "eval-index", "index", "query"} <= listed(top.stdout)
    group = run("lab", "--help")
    assert group.exit_code == 0 and listed(group.stdout) == LAB_COMMANDS
    assert "Usage: cli lab eval [OPTIONS] DATASET_DIR" in run("lab", "eval", "--help").stdout


def test_the_old_names_are_hidden_aliases_of_the_lab_commands():
    context = click.Context(cli)
    assert set(cli.hidden_commands()) == LAB_COMMANDS
    for name in LAB_COMMANDS:
        assert cli.get_command(context, name) is lab.commands[name], name
        assert run(name, "--help").exit_code == 0, name


def test_a_lab_command_without_the_lab_extra_names_it(tmp_path):
    """scipy hidden, as on an install without `ctxsearch[lab]`: one line, exit 2, by the
    group's name and by the old one."""
    for command in (["lab", "polysemy"], ["polysemy"]):
        code = (
            "import sys; sys.modules['scipy'] = None; from search.cli import main; "
            f"sys.argv = ['ctxsearch', *{command!r}, 'bank', 'a river bank', 'a bank loan']; "
            "main()"
        )
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
        )
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip().splitlines() == [
            "Error: this command needs the package scipy: pip install 'ctxsearch[lab]'"
        ]


def test_the_lab_group_loads_without_its_extra():
    code = (
        "import sys; sys.modules['scipy'] = sys.modules['matplotlib'] = None; "
        "from search.cli import main; sys.argv = ['ctxsearch', 'lab', '--help']; main()"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "tune-fusion" in result.stdout


def test_what_needs_a_transformer_refuses_the_test_encoder_in_one_line():
    result = run(
        "lab", "polysemy", "bank", "the river bank", "the bank loan", "--model", HASHED_MODEL
    )
    assert result.exit_code == 1, result.output
    assert "needs a real model" in result.output


@pytest.mark.parametrize("section", ["fusion", "queries"])
def test_bench_sections_that_search_an_index_need_one_and_queries(section, tmp_path):
    assert_error(
        run("lab", "bench", "--only", section, "--index", tmp_path),
        2,
        "needs --index and --queries",
    )


@pytest.mark.parametrize("section", ["stores", "postgres"])
def test_bench_sections_that_measure_postgresql_need_its_url(section):
    assert_error(
        run("lab", "bench", "--only", section),
        2,
        f"the {section} section needs --postgres URL (from a checkout, a throw-away one: "
        "python -m tests.support.postgres_server)",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--faiss-sizes", "3000000000000000000"], "give sizes from 1,000 to 10,000,000"),
        (["--faiss-sizes", "10"], "give sizes from 1,000 to 10,000,000"),
        (["--scale-sizes", "0"], "give sizes from 1 to 10,000,000"),
        (["--store-size", "-5"], "-5 is not in the range 1000<=x<=10000000"),
        (["--limit", "0"], "0 is not in the range 1<=x<=10000000"),
        (["--limit", "3000000000000000000"], "is not in the range 1<=x<=10000000"),
        (["--incremental-files", "99999999999999999999"], "is not in the range"),
    ],
)
def test_bench_sizes_past_what_can_run_are_usage_errors(args, message):
    """Numbers past 64 bits (and sizes a section cannot build) were numpy and FAISS
    tracebacks; they are refused before anything runs."""
    assert_error(run("lab", "bench", "--only", "faiss", *args), 2, message)


def test_the_lab_takes_its_cache_from_the_config_module(tmp_path, monkeypatch):
    from lab.evaluation import static_models_dir

    monkeypatch.setenv("CTXSEARCH_CACHE", str(tmp_path / "mine"))
    monkeypatch.delenv("CTXSEARCH_EVAL_CACHE", raising=False)
    assert static_models_dir() == tmp_path / "mine" / "eval" / "static-models"
