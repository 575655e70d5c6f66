"""One configuration module: every variable is read through `indexer.config`, listed in
its registry and in docs/configuration.md, read when asked, and `$CTXSEARCH_CACHE`
moves the caches (a real index run with the tiny BERT)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer import config
from search.cli import cli
from tests.conftest import ROOT

PRODUCT = ("indexer", "search")
CONFIG_MODULE = ROOT / "indexer" / "config.py"
NAME = re.compile(r"\bCTXSEARCH_[A-Z_]+\b")


def _product_files() -> list[Path]:
    return sorted(path for package in PRODUCT for path in (ROOT / package).rglob("*.py"))


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (they document, not read)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def test_no_module_but_the_config_module_names_a_ctxsearch_variable_in_code():
    offenders = []
    for path in _product_files():
        if path == CONFIG_MODULE:
            continue
        tree = ast.parse(path.read_text(), str(path))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and "CTXSEARCH_" in node.value
                and id(node) not in docstrings
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert offenders == [], "read these through indexer.config:\n" + "\n".join(offenders)


def test_no_module_but_the_config_module_touches_the_environment():
    offenders = []
    for path in _product_files():
        if path == CONFIG_MODULE:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            touches = (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
                and node.attr in {"environ", "getenv", "putenv", "unsetenv", "environb"}
            ) or (
                isinstance(node, ast.ImportFrom)
                and node.module == "os"
                and {alias.name for alias in node.names} & {"environ", "getenv", "environb"}
            )
            if touches:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == [], "use indexer.config.read / set_default:\n" + "\n".join(offenders)


def test_every_ctxsearch_variable_named_anywhere_is_registered():
    registered = {variable.name for variable in config.VARIABLES}
    places = [*_product_files(), *(ROOT / "docs").rglob("*.md"), *(ROOT / "tests").rglob("*.py")]
    named = {
        name: path
        for path in [*places, ROOT / "README.md", ROOT / "Makefile"]
        for name in NAME.findall(path.read_text())
    }
    unknown = {name: str(path.relative_to(ROOT)) for name, path in named.items()}
    for name in registered:
        unknown.pop(name, None)
    assert unknown == {}


def test_the_configuration_page_is_current_and_lists_every_variable():
    page = (ROOT / "docs" / "configuration.md").read_text()
    assert page == config.reference(), (
        "docs/configuration.md is stale: run `python -m indexer.config > docs/configuration.md`"
    )
    rows = {line.split("|")[1].strip().strip("`") for line in page.splitlines() if "| `" in line}
    assert {variable.name for variable in config.VARIABLES} <= rows
    seams = [variable for variable in config.VARIABLES if variable.kind == config.TEST_SEAM]
    assert {"CTXSEARCH_KILL_AT", "CTXSEARCH_HOLD_AT"} <= {seam.name for seam in seams}
    for seam in seams:
        assert f"| `{seam.name}` | *test seam:*" in page


def test_the_cli_prints_the_same_page():
    completed = subprocess.run(
        [sys.executable, "-m", "indexer.config"], capture_output=True, text=True, cwd=ROOT
    )
    assert completed.returncode == 0 and completed.stdout == config.reference()


def test_importing_the_config_module_imports_nothing_heavy():
    heavy = ("torch", "numpy", "sqlalchemy", "faiss", "click", "transformers", "search")
    script = (
        "import sys, indexer.config; "
        f"print([m for m in sys.modules if m.split('.')[0] in {heavy!r}])"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert completed.stdout.strip() == "[]", completed.stderr


def test_the_folders_follow_the_variables_when_asked_not_at_import(tmp_path, monkeypatch):
    for variable in (config.CACHE, config.EVAL_CACHE, config.INDEX):
        monkeypatch.delenv(variable.name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    home = tmp_path / "home"
    assert config.cache_dir() == home / ".cache" / "ctxsearch"
    assert config.model_cache_dir() == home / ".cache" / "ctxsearch" / "models"
    assert config.eval_cache_dir() == home / ".cache" / "ctxsearch" / "eval"
    assert config.index_location() == str(home / ".local" / "share" / "ctxsearch" / "index")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert config.model_cache_dir() == tmp_path / "xdg" / "ctxsearch" / "models"
    assert config.index_location() == str(tmp_path / "data" / "ctxsearch" / "index")
    monkeypatch.setenv("CTXSEARCH_CACHE", str(tmp_path / "mine"))
    assert config.model_cache_dir() == tmp_path / "mine" / "models"
    assert config.eval_cache_dir() == tmp_path / "mine" / "eval"
    monkeypatch.setenv("CTXSEARCH_EVAL_CACHE", str(tmp_path / "eval"))
    assert config.eval_cache_dir() == tmp_path / "eval"
    assert config.model_cache_dir() == tmp_path / "mine" / "models"
    monkeypatch.setenv("CTXSEARCH_INDEX", "postgresql+psycopg://me@db:5432/search")
    assert config.index_location() == "postgresql+psycopg://me@db:5432/search"
    monkeypatch.setenv("CTXSEARCH_CACHE", "")  # empty is unset
    assert config.cache_dir() == tmp_path / "xdg" / "ctxsearch"


def test_the_cli_takes_its_defaults_from_the_config_module(tmp_path, monkeypatch):
    from search.paths import default_index

    monkeypatch.setenv("CTXSEARCH_INDEX", str(tmp_path / "ix"))
    assert default_index() == tmp_path / "ix"


@pytest.mark.parametrize("value", ["abc", "-5", "1.5"])
def test_a_bad_busy_timeout_is_a_one_line_usage_error_not_a_broken_index(
    value, tmp_path, notes, tiny_model_dir, monkeypatch
):
    runner = CliRunner()
    index = tmp_path / "ix"
    arguments = ["index", str(notes), "--index", str(index), "--model", str(tiny_model_dir)]
    assert runner.invoke(cli, [*arguments, "--quiet"]).exit_code == 0
    monkeypatch.setenv("CTXSEARCH_BUSY_TIMEOUT_MS", value)
    for command in (arguments, ["query", "heron", "--index", str(index)]):
        result = runner.invoke(cli, command)
        assert result.exit_code == 2, result.output
        assert "CTXSEARCH_BUSY_TIMEOUT_MS must be a whole number of milliseconds" in result.stderr
        assert "Traceback" not in result.output and "index database" not in result.stderr


def test_the_host_name_comes_from_ctxsearch_host_when_set(monkeypatch):
    import socket

    monkeypatch.delenv("CTXSEARCH_HOST", raising=False)
    assert config.host_name() == socket.gethostname()
    monkeypatch.setenv("CTXSEARCH_HOST", "alpha")
    assert config.host_name() == "alpha"


def test_ctxsearch_cache_holds_the_model_cache_of_a_real_index_run(
    tiny_model_dir, notes, tmp_path, monkeypatch
):
    chosen, default = tmp_path / "chosen-cache", tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(default))  # where the default cache would be
    monkeypatch.setenv("CTXSEARCH_CACHE", str(chosen))
    arguments = ["index", str(notes), "--index", str(tmp_path / "ix"), "--model"]
    result = CliRunner().invoke(cli, [*arguments, str(tiny_model_dir), "--quiet", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["query_export"] == "ready"
    exports = sorted(path.name for path in (chosen / "models").glob("onnx-*"))
    assert exports and all(not name.startswith(".") for name in exports)
    assert (chosen / "models" / exports[0] / "info.json").exists()
    assert not (default / "ctxsearch").exists()  # nothing in the default cache
