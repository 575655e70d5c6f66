"""Runs split documents at their own structure (issue 26 items 1 and 4): each stored chunk
is a passage inside a section, its `heading` the section that holds it and its `section`
the trail of titles (`Guide`, `Digest authentication` joined by SEPARATOR), for every
format and for records."""

from __future__ import annotations

import io
import re
import sqlite3
from pathlib import Path

import pytest

from indexer import Indexer
from indexer.store.local.index_files import DATABASE_FILE
from search.engine import Searcher
from tests.conftest import make_pdf
from tests.support.raw_statements import run_statements

SEPARATOR = " \u203a "


def sentences(topic: str, count: int) -> str:
    return " ".join(
        f"The {topic} step number {n} checks one more header of the request." for n in range(count)
    )


# A long first section (more than one window of the tiny model) and a shorter second one:
# a window from the file's start that reaches Digest begins inside Basic.
AUTHENTICATION = (
    "# Guide\n\n"
    "## Basic authentication\n\n"
    + "\n\n".join(sentences("basic", 3) for _ in range(4))
    + "\n\n## Digest authentication\n\n"
    + "Digest hashes the password with a nonce the server sends, so it never travels. "
    + sentences("digest", 3)  # not small: a small section joins the one before it
    + "\n"
)

RST = """Manual
======

Installing
----------

Some words on installing: fetch the release, check its signature against the published
key, unpack it into a folder of its own and read the notes that come with it first.

On Linux
~~~~~~~~

Run the package manager to install the otters package, then start its service, enable
it at boot and look at the log it writes to make sure that it came up without errors.
"""

HTML = """<html><body>
<h1>Handbook</h1>
<p>Welcome to the handbook of the yard, where every crew member reads these pages
before the first shift, and again whenever the rules they describe have changed.</p>
<h2>Safety</h2>
<p>Wear a helmet, boots with steel toes and a vest that others can see from afar, and
keep them on for as long as you are anywhere on the site, even on a short visit.</p>
<h3>Cranes</h3>
<p>The crane lifts steel beams only in calm wind: the operator checks the gauge before
every lift, and stops at once when a gust passes the limit written on the cab.</p>
</body></html>
"""


def stored(index: Path) -> list[tuple[str, str, int, str, str | None, str | None, int | None]]:
    """(path, text, ordinal, ..., heading, section, page) of every stored chunk."""
    database = sqlite3.connect(index / DATABASE_FILE)
    try:
        return database.execute(
            "SELECT documents.path, chunks.text, chunks.ordinal, chunks.heading, "
            "chunks.section, chunks.page FROM chunks JOIN documents "
            "ON chunks.document_id = documents.id ORDER BY documents.path, chunks.ordinal"
        ).fetchall()
    finally:
        database.close()


def hits_for(index: Path, words: str) -> list:
    with Searcher(index) as searcher:
        return searcher.search(words, mode="lexical", k=50, all_chunks=True).results


@pytest.fixture(scope="module")
def sections_index(tmp_path_factory, tiny_model_dir):
    folder = tmp_path_factory.mktemp("sections") / "docs"
    folder.mkdir()
    (folder / "auth.md").write_text(AUTHENTICATION)
    (folder / "manual.rst").write_text(RST)
    (folder / "handbook.html").write_text(HTML)
    (folder / "paper.pdf").write_bytes(three_page_pdf())
    index = tmp_path_factory.mktemp("sections-index") / "ix"
    Indexer(index, model=str(tiny_model_dir)).index_folder(folder)
    return folder, index


def three_page_pdf() -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for n in range(3):
        lines = [f"Page {n + 1} is about crane number {n + 1}.", "It lifts steel beams."]
        writer.add_page(PdfReader(io.BytesIO(make_pdf(lines))).pages[0])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_passage_of_a_second_section_is_headed_by_that_section(sections_index):
    _folder, index = sections_index
    digest = [hit for hit in hits_for(index, "nonce") if hit.path.endswith("auth.md")]
    assert digest, "the Digest section was found"
    assert all(hit.heading == "Digest authentication" for hit in digest), [
        (hit.heading, hit.snippet[:40]) for hit in digest
    ]
    assert all(hit.section == f"Guide{SEPARATOR}Digest authentication" for hit in digest)
    basic = [row for row in stored(index) if row[0].endswith("auth.md") and "basic" in row[1]]
    assert basic and all(row[3] == "Basic authentication" for row in basic)
    assert all("nonce" not in row[1] for row in basic)


def test_rst_and_html_passages_carry_their_trails(sections_index):
    _folder, index = sections_index
    (rst,) = [hit for hit in hits_for(index, "otters") if hit.path.endswith("manual.rst")]
    assert rst.section == SEPARATOR.join(["Manual", "Installing", "On Linux"])
    assert rst.heading == "On Linux"
    (html,) = [hit for hit in hits_for(index, "crane") if hit.path.endswith("handbook.html")]
    assert html.section == SEPARATOR.join(["Handbook", "Safety", "Cranes"])
    assert html.heading == "Cranes" and html.line == 8


def test_a_pdf_page_is_a_section_of_its_own(sections_index):
    _folder, index = sections_index
    rows = [row for row in stored(index) if row[0].endswith("paper.pdf")]
    assert [row[5] for row in rows] == [1, 2, 3]
    for row in rows:
        assert re.findall(r"Page (\d)", row[1]) == [str(row[5])]
        assert row[3] is None and row[4] is None  # pages have no titles


def test_every_character_of_a_file_lies_in_a_passage_of_at_most_the_window(
    sections_index, tiny_model_dir
):
    from indexer.encoders.loading import load_model

    folder, index = sections_index
    budget = load_model(str(tiny_model_dir)).token_spans
    rows = [row for row in stored(index) if row[0].endswith("auth.md")]
    text = (folder / "auth.md").read_text()
    with Searcher(index) as searcher:
        hit = searcher.search("nonce", mode="lexical", k=1).results[0]
        document = searcher.document(hit.document_id)
    covered = [False] * len(text)
    for span in document.chunks:
        assert text[span.start : span.end] == document.text[span.start : span.end]
        covered[span.start : span.end] = [True] * (span.end - span.start)
    assert all(hit or char.isspace() for char, hit in zip(text, covered, strict=True))
    assert len(rows) > 2 and all(len(budget(row[1])) <= 126 for row in rows)


def test_a_record_is_split_like_plain_text_with_no_section(tmp_path, tiny_model_dir):
    index = tmp_path / "ix"
    text = "\n\n".join(sentences("record", 4) for _ in range(6))
    Indexer(index, model=str(tiny_model_dir)).upsert_records([{"id": "r1", "text": text}])
    rows = stored(index)
    assert len(rows) > 1 and all(row[0] == "record:r1" for row in rows)
    assert all(row[3] is None and row[4] is None for row in rows)
    assert all(row[1].strip() and row[1] in text for row in rows)
    words = re.findall(r"\w+", text)
    assert set(words) == {word for row in rows for word in re.findall(r"\w+", row[1])}


def almanac(sections: int, edited: int | None = None) -> str:
    parts = ["# Almanac\n\n"]
    for n in range(sections):
        body = "\n\n".join(sentences(f"river {n}", 3) for _ in range(3))
        if n == edited:
            body += " A sentence added to this one section only, about the river's otters."
        parts.append(f"## River {n}\n\n{body}\n\n")
    return "".join(parts)


def test_an_edit_to_one_section_changes_only_the_passages_near_it(tmp_path, tiny_model_dir):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "almanac.md").write_text(almanac(30))
    index = tmp_path / "ix"
    indexer = Indexer(index, model=str(tiny_model_dir))
    indexer.index_folder(folder)
    before = {row[1] for row in stored(index)}
    (folder / "almanac.md").write_text(almanac(30, edited=12))
    indexer.index_folder(folder)
    after = [row[1] for row in stored(index)]
    changed = [text for text in after if text not in before]
    assert len(after) > 30
    assert 1 <= len(changed) <= 2, len(changed)
    assert all("River 12" in text or "river 12" in text for text in changed)


def undo_0006(target) -> None:
    """Make the index at `target` what version 0005 left: no `section` column, no record
    of the migration."""
    statements = [
        "ALTER TABLE chunks DROP COLUMN section",
        "DELETE FROM migrations WHERE name = '0006_sections'",
    ]
    run_statements(target, statements)


def test_an_index_from_before_sections_is_migrated_and_new_runs_fill_them(
    any_index, tiny_model_dir, tmp_path
):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "manual.rst").write_text(RST)
    indexer = Indexer(any_index, model=str(tiny_model_dir))
    indexer.index_folder(folder)
    undo_0006(any_index)
    with Searcher(any_index) as searcher:  # opening migrates it; the old rows have no trail
        (old,) = searcher.search("otters", mode="lexical", k=1).results
        assert (old.heading, old.section) == ("On Linux", None)
    (folder / "auth.md").write_text(AUTHENTICATION)
    Indexer(any_index, model=str(tiny_model_dir)).index_folder(folder)
    with Searcher(any_index) as searcher:
        (old,) = searcher.search("otters", mode="lexical", k=1).results
        (new,) = searcher.search("nonce", mode="lexical", k=1).results
    assert old.section is None  # an unchanged file keeps its rows
    assert new.section == f"Guide{SEPARATOR}Digest authentication"


def test_the_table_json_and_http_show_the_section(sections_index, tmp_path):
    import json

    import httpx
    from click.testing import CliRunner

    from search.cli import cli
    from tests.support.serving import running_server

    _folder, index = sections_index
    trail = f"Guide{SEPARATOR}Digest authentication"
    query = ["query", "nonce", "--index", str(index), "--mode", "lexical", "-k", "1"]
    table = CliRunner().invoke(cli, query)
    assert table.exit_code == 0, table.output
    assert f"§ {trail}" in table.stdout
    found = CliRunner().invoke(cli, [*query, "--json"])
    (hit,) = json.loads(found.stdout)["results"]
    assert (hit["heading"], hit["section"]) == ("Digest authentication", trail)
    with running_server(index, tmp_path / "log") as server:
        for answer in (
            httpx.get(f"{server.url}/search", params={"q": "nonce", "mode": "lexical", "k": 1}),
            httpx.post(f"{server.url}/search", json={"q": "nonce", "mode": "lexical", "k": 1}),
        ):
            (hit,) = answer.json()["results"]
            assert (hit["heading"], hit["section"]) == ("Digest authentication", trail)
