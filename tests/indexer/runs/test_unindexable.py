"""A file whose content can no longer be indexed leaves the index; a file that cannot be
read now keeps its indexed version.

A file turned into data (a base64 blob, binary bytes) has no text a fresh index would
hold, so the run that meets it removes its old document and says so. A failure that may
pass (no permission now) is not a verdict on the file: its old version stays, as the
documents of a folder that cannot be listed do.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.store.backends import open_store, verify_target
from search.cli import cli
from tests.conftest import ROOT

PROSE = "Otters hunt along the river bank at dusk, and herons wait in the shallows.\n"


def run(*args: object):
    return CliRunner().invoke(cli, [str(arg) for arg in args])


def stored_paths(index: Path, folder: Path) -> list[str]:
    store = open_store(index)
    try:
        return sorted(Path(path).name for path in store.documents_under(folder.resolve()))
    finally:
        store.close()


def lexical_hits(index: Path, words: str) -> list[str]:
    found = run("query", words, "--index", index, "--mode", "lexical", "--all-chunks", "--json")
    assert found.exit_code == 0, found.output
    return sorted(Path(hit["path"]).name for hit in json.loads(found.stdout)["results"])


def rewrite(path: Path, data: bytes) -> None:
    """Replace a file's bytes, with an mtime the run cannot take for the old one's."""
    before = path.stat().st_mtime_ns
    path.write_bytes(data)
    os.utime(path, ns=(before + 10**9, before + 10**9))


BLOB = base64.b64encode(os.urandom(30_000))  # 40,000 characters with no space
BINARY = b"otters\x00\x01\x02" * 100


@pytest.mark.parametrize(
    ("data", "exit_code", "said"),
    [
        (BLOB, 0, "skipped {}: no natural-language text"),
        (BINARY, 4, "failed {}: binary content (NUL bytes) in a text file"),
    ],
    ids=["base64", "binary"],
)
def test_a_file_turned_into_data_leaves_the_index(tmp_path, fast_model, data, exit_code, said):
    folder, index = tmp_path / "docs", tmp_path / "ix"
    folder.mkdir()
    (folder / "notes.txt").write_text(PROSE)
    (folder / "other.txt").write_text("Kingfishers dive for minnows.\n")
    assert run("index", folder, "--index", index, "--model", fast_model).exit_code == 0
    assert lexical_hits(index, "otters") == ["notes.txt"]

    rewrite(folder / "notes.txt", data)
    result = run("index", folder, "--index", index, "--json")
    assert result.exit_code == exit_code, result.output
    summary = json.loads(result.stdout)
    assert summary["removed"] == 1 and summary["total_documents"] == 1
    [line] = [line for line in result.stderr.splitlines() if "notes.txt" in line]
    assert line.startswith(said.format(folder / "notes.txt")), line
    assert line.endswith("; its indexed version is removed"), line
    assert stored_paths(index, folder) == ["other.txt"]
    assert lexical_hits(index, "otters") == []
    assert verify_target(index).consistent

    fresh = tmp_path / "fresh"
    assert run("index", folder, "--index", fresh, "--model", fast_model).exit_code == exit_code
    assert stored_paths(fresh, folder) == ["other.txt"]

    # the same data again: nothing left to remove, and nothing said of a removal
    os.utime(folder / "notes.txt", ns=(1, 1))
    again = run("index", folder, "--index", index, "--json")
    assert json.loads(again.stdout)["removed"] == 0
    assert "removed" not in next(line for line in again.stderr.splitlines() if "notes.txt" in line)

    rewrite(folder / "notes.txt", PROSE.encode())  # prose again: indexed again
    assert run("index", folder, "--index", index).exit_code == 0
    assert lexical_hits(index, "otters") == ["notes.txt"]


def as_unprivileged(command: list[str]) -> list[str]:
    """Root reads any file: drop the capabilities that let it."""
    if os.geteuid() != 0:
        return command
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}", *command]


def test_a_file_that_cannot_be_read_now_keeps_its_indexed_version(tmp_path, fast_model):
    folder, index = tmp_path / "docs", tmp_path / "ix"
    folder.mkdir()
    (folder / "notes.txt").write_text(PROSE)
    assert run("index", folder, "--index", index, "--model", fast_model).exit_code == 0
    rewrite(folder / "notes.txt", PROSE.encode() + b"More on otters.\n")
    os.chmod(folder / "notes.txt", 0o000)
    try:
        command = [sys.executable, "-m", "search", "index", str(folder), "--index", str(index)]
        result = subprocess.run(
            as_unprivileged([*command, "--json"]), cwd=ROOT, capture_output=True, text=True
        )
    finally:
        os.chmod(folder / "notes.txt", 0o644)
    assert result.returncode == 4, result.stderr
    assert "failed" in result.stderr and "notes.txt: Permission denied" in result.stderr
    assert "removed" not in result.stderr
    assert json.loads(result.stdout)["removed"] == 0
    assert lexical_hits(index, "otters") == ["notes.txt"]
