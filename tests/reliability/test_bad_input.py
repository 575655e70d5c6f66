"""Every kind of bad input: one clear line on stderr, a documented exit code, no damage.

Exit codes: 2 usage mistake, 1 failure, 3 index busy, 4 indexed but some files failed.
"""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from search.cli import cli
from tests.conftest import ROOT, make_pdf
from tests.support.crash_harness import index_in_process


@pytest.fixture
def index_dir(tmp_path, notes, fast_model):
    """A small index built with the tiny model, from the `notes` folder."""
    index_in_process(tmp_path / "ix", notes, fast_model)
    return tmp_path / "ix"


def fingerprint(index_dir: Path) -> dict:
    """The parts of an index that a failed command must leave exactly as they were."""
    rows = sqlite3.connect(index_dir / "ctxsearch.sqlite")
    try:
        tables = {
            table: rows.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
            for table in ("manifest", "documents", "chunks")
        }
    finally:
        rows.close()
    faiss = {p.name: p.read_bytes() for p in index_dir.iterdir() if p.suffix in (".faiss", ".npz")}
    return {"tables": tables, "faiss": faiss}


def run(*args, env=None):
    result = CliRunner().invoke(cli, [str(a) for a in args], env=env)
    assert "Traceback" not in result.output + result.stderr
    return result


def assert_error(result, code: int, message: str):
    assert result.exit_code == code, (result.exit_code, result.output, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(lines) == 1 and message in lines[0], result.stderr


# -- paths ------------------------------------------------------------------------------


def test_a_missing_path(index_dir, tmp_path):
    before = fingerprint(index_dir)
    assert_error(run("index", tmp_path / "nope", "--index", index_dir), 2, "no such file or folder")
    assert fingerprint(index_dir) == before


def test_a_missing_path_among_several_changes_nothing(index_dir, notes, tmp_path):
    before = fingerprint(index_dir)
    args = ("index", notes, notes / "money.txt", tmp_path / "nope", "--index", index_dir)
    assert_error(run(*args), 2, "nope: no such file or folder")
    assert fingerprint(index_dir) == before


def test_a_file_of_a_format_not_read(index_dir, notes):
    before = fingerprint(index_dir)
    png = notes / "photo.png"
    assert_error(run("index", png, "--index", index_dir), 2, "not a format ctxsearch reads")
    assert fingerprint(index_dir) == before


def test_an_empty_folder(index_dir, tmp_path):
    (tmp_path / "empty").mkdir()
    before = fingerprint(index_dir)
    assert_error(run("index", tmp_path / "empty", "--index", index_dir), 2, "no files to index")
    assert fingerprint(index_dir) == before


def test_empty_files_are_indexed_without_chunks(index_dir, notes):
    (notes / "blank.md").write_text("")
    (notes / "spaces.txt").write_text("   \n\n  ")
    result = run("index", notes, "--index", index_dir, "--json")
    assert (
        result.exit_code == 0 and '"added": 2' in result.stdout and '"chunks": 0' in result.stdout
    )


def test_symlink_loops_are_skipped(index_dir, notes):
    (notes / "loop").symlink_to(notes)
    (notes / "a.txt").symlink_to(notes / "b.txt")
    (notes / "b.txt").symlink_to(notes / "a.txt")
    result = run("index", notes, "--index", index_dir, "--json")
    assert result.exit_code == 0 and '"added": 0' in result.stdout


def test_names_with_spaces_and_non_ascii(index_dir, notes):
    folder = notes / "Größere Notizen"
    folder.mkdir()
    (folder / "café crème 北京.md").write_text("Notes on brewing espresso in Beijing.")
    assert run("index", notes, "--index", index_dir, "--quiet").exit_code == 0
    result = run("query", "espresso Beijing", "--index", index_dir, "--mode", "lexical", "--json")
    assert "café crème 北京.md" in result.stdout


# -- file contents: the run goes on, the file is named on stderr, exit 4 ------------------


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("binary.txt", b"\x00\x01\x02\x03" * 500, "binary content"),
        ("broken.pdf", make_pdf(["a line of text"])[:150], "corrupt PDF"),
        ("fake.pdf", b"this is not a PDF at all", "corrupt PDF"),
    ],
)
def test_unreadable_contents_are_reported_and_skipped(index_dir, notes, name, content, reason):
    (notes / name).write_bytes(content)
    (notes / "good.md").write_text("A good note about kingfishers.")
    result = run("index", notes, "--index", index_dir)
    assert result.exit_code == 4
    assert f"skipped {notes / name}: {reason}" in result.stderr or reason in result.stderr
    assert "1 added" in result.stdout and "1 failed" in result.stdout


def test_a_50_megabyte_file_is_capped_not_loaded(index_dir, notes):
    with open(notes / "huge.txt", "wb") as handle:
        line = b"a very long log line about nothing in particular\n"
        handle.write(line * (50 * 1024 * 1024 // len(line)))
    result = run("index", notes, "--index", index_dir)
    assert result.exit_code == 4 and "over the 20 MB size cap" in result.stderr


def test_other_encodings_are_detected(index_dir, notes):
    (notes / "latin.txt").write_bytes(
        "Le garçon a mangé une crème brûlée à la plage.".encode("cp1252")
    )
    (notes / "utf16.txt").write_text("Unicode sixteen with a naïve résumé.", encoding="utf-16")
    assert run("index", notes, "--index", index_dir, "--quiet").exit_code == 0
    result = run("query", "crème brûlée", "--index", index_dir, "--mode", "lexical", "--json")
    assert "latin.txt" in result.stdout and "crème brûlée" in result.stdout


def test_an_unreadable_file_permissions(tmp_path, notes, fast_model):
    """Root reads any file, so as root the run drops the capabilities that allow it."""
    (notes / "secret.md").write_text("Nobody may read this.")
    os.chmod(notes / "secret.md", 0o000)
    command = [
        sys.executable,
        "-m",
        "search",
        "index",
        str(notes),
        "--index",
        str(tmp_path / "ix"),
        "--model",
        str(fast_model),
    ]
    if os.geteuid() == 0:
        caps = "-dac_override,-dac_read_search"
        command = ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}", *command]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 4, result.stderr
    assert "secret.md: Permission denied" in result.stderr
    assert "Traceback" not in result.stderr


# -- the index itself -------------------------------------------------------------------


def test_a_folder_that_is_not_an_index(tmp_path, notes):
    assert_error(run("query", "owls", "--index", notes), 2, "not a ctxsearch index")
    assert_error(run("info", "--index", notes), 2, "not a ctxsearch index")
    listing = sorted(p.name for p in notes.rglob("*"))
    assert_error(run("index", notes, "--index", notes), 2, "not empty and holds no index")
    assert sorted(p.name for p in notes.rglob("*")) == listing


def test_a_corrupt_faiss_file(index_dir):
    next(index_dir.glob("contextual-*.faiss")).write_bytes(b"garbage" * 100)
    assert_error(run("query", "owls", "--index", index_dir), 1, "unreadable FAISS file")
    result = run("verify", "--index", index_dir)
    assert result.exit_code == 1 and "unreadable FAISS file" in result.stdout


def test_a_missing_space_file_names_the_problem_and_the_fix(index_dir, notes):
    """Issue 24, item 19: a published vector space file is gone (as a Ctrl-C after the
    commit used to leave it); every command says so in a sentence naming the fix."""
    next(index_dir.glob("contextual-*.faiss")).unlink()
    for args in (["index", notes], ["query", "owls"], ["compare", "owls"], ["remove", notes]):
        assert_error(run(*args, "--index", index_dir), 1, "is missing: run `ctxsearch repair`")
    checked = run("verify", "--index", index_dir)
    assert checked.exit_code == 1 and "is missing: run `ctxsearch repair`" in checked.stdout
    assert run("repair", "--index", index_dir).exit_code == 0
    assert run("verify", "--index", index_dir).exit_code == 0
    assert run("query", "owls", "--index", index_dir).exit_code == 0


def test_a_corrupt_sqlite_file(index_dir):
    (index_dir / "ctxsearch.sqlite").write_bytes(b"garbage" * 1000)
    for name in ("ctxsearch.sqlite-wal", "ctxsearch.sqlite-shm"):
        (index_dir / name).unlink(missing_ok=True)
    assert_error(run("query", "owls", "--index", index_dir), 1, "not a readable SQLite database")


def test_a_locked_sqlite_file(index_dir, notes):
    (notes / "extra.md").write_text("One more note about herons.")
    before = fingerprint(index_dir)
    holder = sqlite3.connect(index_dir / "ctxsearch.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = run("index", notes, "--index", index_dir, env={"CTXSEARCH_BUSY_TIMEOUT_MS": "300"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert_error(result, 3, "locked")
    assert fingerprint(index_dir) == before


# -- queries and models -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["query", ""], "the query is empty"),
        (["query", "  \t "], "the query is empty"),
        (["query", "owls", "-k", "0"], "k must be a positive number"),
        (["query", "owls", "-k", "-3"], "k must be a positive number"),
        (["query", "owls", "-k", "many"], "'many' is not a valid integer"),
        # numbers past 64 bits (issue 12, item 9)
        (["query", "owls", "-k", "3000000000000000000"], "k must be at most 1000"),
        (["query", "owls", "-k", "99999999999999999999999"], "k must be at most 1000"),
        (["query", "owls", "-k", "1001"], "k must be at most 1000, not 1001"),
        (["query", "owls", "--mode", "lexical", "-k", "2" * 40], "k must be at most 1000"),
        (["compare", "owls", "-k", "3000000000000000000"], "k must be at most 1000"),
        (["query", "owls", "-k", "2.5"], "'2.5' is not a valid integer"),
        # very long queries (item 13)
        (["query", "b" * 4001], "the query is 4,001 characters long; the most is 4,000"),
        (["query", "owl " * 250_000], "the query is 1,000,000 characters long"),
        (["compare", "b" * 4001], "the query is 4,001 characters long"),
        # queries that draw nothing (item 14)
        (["query", "\u200b"], "the query is empty"),
        (["query", "\u200b\u200c\u2060\ufeff", "--mode", "lexical"], "the query is empty"),
        (["query", "\x01\x1b\x7f"], "the query is empty"),
        (["query", "\u202e \u00ad"], "the query is empty"),
        (["compare", "\u200b"], "the query is empty"),
    ],
)
def test_bad_queries(index_dir, args, message):
    assert_error(run(*args, "--index", index_dir), 2, message)


def test_a_query_that_is_not_valid_utf8_is_a_usage_error(index_dir):
    """Python hands such an argument over with lone surrogates, which the tokenizer and
    SQLite cannot take (a TypeError traceback before)."""
    for mode in ("contextual", "lexical"):
        command = [sys.executable, "-m", "search", "query", b"bank\xff", "--mode", mode]
        done = subprocess.run(
            [*command, "--index", str(index_dir)], cwd=ROOT, capture_output=True, text=True
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines()[-1] == (
            "Error: the query is not valid Unicode text (it holds a lone surrogate)"
        )


# -- names that would drive the terminal (item 16) ----------------------------------------

ESCAPES = "\x1b]0;pwned\x07\x1b[5m\u202e"  # set the window title, blink, right-to-left
SHOWN = "\\x1b]0;pwned\\x07\\x1b[5m\\u202e"  # what a terminal shows instead


def assert_no_raw_escapes(text: str) -> None:
    for raw in ("\x1b]", "\x07", "\x1b[5m", "\u202e"):
        assert raw not in text, repr(text)


def test_file_names_with_escape_sequences_reach_the_terminal_escaped(index_dir, notes):
    (notes / f"{ESCAPES}owls.md").write_text("Barn owls hunt voles at dusk over the meadow.")
    (notes / f"{ESCAPES}broken.pdf").write_bytes(b"not a PDF at all")
    indexed = CliRunner().invoke(cli, ["index", str(notes), "--index", str(index_dir)], color=True)
    assert indexed.exit_code == 4, indexed.output
    assert_no_raw_escapes(indexed.output + indexed.stderr)
    assert f"{SHOWN}broken.pdf: corrupt PDF" in indexed.stderr
    # `compare` fits names to the terminal's width: one wide enough for the whole name,
    # whatever terminal (or $COLUMNS, 80 under pytest-xdist) the tests run in
    wide = {"COLUMNS": "120"}
    for command in (["query", "barn owls voles"], ["compare", "barn owls voles", "-k", "3"]):
        shown = CliRunner().invoke(cli, [*command, "--index", str(index_dir)], color=True, env=wide)
        assert shown.exit_code == 0, shown.output
        assert_no_raw_escapes(shown.output + shown.stderr)
        assert f"{SHOWN}owls.md" in shown.output
    found = json.loads(
        run("query", "barn owls voles", "--index", index_dir, "-k", 1, "--json").stdout
    )
    assert found["results"][0]["path"] == str(notes / f"{ESCAPES}owls.md"), "JSON stays exact"


def test_an_error_naming_such_a_path_is_one_escaped_line(tmp_path):
    folder = tmp_path / "a\nb\x1b[5m"
    result = CliRunner().invoke(cli, ["query", "owls", "--index", str(folder)], color=True)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith("Error: ")
    assert "a\\nb\\x1b[5m" in result.stderr and "\x1b[5m" not in result.stderr


def test_a_model_that_cannot_be_loaded_offline(tmp_path, notes):
    result = run("index", notes, "--index", tmp_path / "new", "--model", "someone/not-here")
    assert_error(result, 1, "cannot load model 'someone/not-here' from local files")
    assert not (tmp_path / "new").exists()
