"""An edited file keeps the rows of its unchanged passages, and a kept row holds exactly
what the new passage holds, on every store.

A passage's content key hashes what the model reads: its section trail, a blank line,
its text. `Alpha\\n\\nword220 …` with no section and `word220 …` under the section
`Alpha` read the same, so the second may take the first's vectors, but not its row: the
row's text, offsets and lexical entry are the passage's own. `verify` compares every
passage's text with the file's at its offsets, so it sees a row that lies.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from indexer.store.backends import open_store
from search.cli import cli


def run(*args: object):
    return CliRunner().invoke(cli, [str(arg) for arg in args])


def words(first: int, last: int = 300) -> str:
    return " ".join(f"word{n}" for n in range(first, last))


def stored_rows(index, path: Path) -> list[tuple]:
    """Every passage of the file as stored: what it holds and where it sits."""
    store = open_store(index)
    try:
        with store.snapshot() as snapshot:
            [document] = snapshot.documents_at(str(path))
            _, chunks = snapshot.document(document.id)
    finally:
        store.close()
    return [
        (c.ordinal, c.start, c.end, c.text, c.section, c.heading, c.line, c.end_line)
        for c in chunks
    ]


def test_a_passage_whose_heading_moved_into_its_trail_holds_its_own_text(
    tmp_path, any_index, fast_model
):
    folder = tmp_path / "docs"
    folder.mkdir()
    doc = (folder / "doc.md").resolve()
    doc.write_text(f"Alpha\n\n{words(220)}\n")  # one passage, no section
    assert run("index", folder, "--index", any_index, "--model", fast_model).exit_code == 0

    before = doc.stat().st_mtime_ns
    doc.write_text(f"# Alpha\n\n{words(0)}\n")  # a heading: its last passage reads the same
    os.utime(doc, ns=(before + 10**9, before + 10**9))
    edited = run("index", folder, "--index", any_index, "--json")
    assert edited.exit_code == 0, edited.output
    summary = json.loads(edited.stdout)
    assert summary["encoded"] == summary["chunks"] - 1  # that passage's vectors are reused

    text = doc.read_text()
    rows = stored_rows(any_index, doc)
    verified = run("verify", "--index", any_index)
    assert verified.exit_code == 0, verified.output
    assert f"passage texts compared with 1 files read again ({len(rows)} passages)" in (
        verified.stdout
    )
    assert rows[-1][3] == words(220) and rows[-1][4] == "Alpha"
    for ordinal, start, end, stored, *_ in rows:
        assert text[start:end] == stored, f"passage {ordinal} does not hold the file's text"

    found = run(
        "query", "alpha", "--index", any_index, "--mode", "lexical", "--all-chunks", "--json"
    )
    hits = json.loads(found.stdout)["results"]
    assert [hit["ordinal"] for hit in hits] == [0]  # only the passage that holds the word

    fresh = tmp_path / "fresh"
    assert run("index", folder, "--index", fresh, "--model", fast_model).exit_code == 0
    assert stored_rows(fresh, doc) == rows
