"""Filters at query time (folder, glob, file type) apply inside the search, on every
backend and in every mode: k hits come back whenever the filter allows k matching chunks."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer import Indexer
from indexer.errors import InvalidQuery
from indexer.store.filters import make_filter
from indexer.store.globs import glob_regex
from search.engine import Searcher
from search.modes import MODES

WORDS = "otters build dens of reeds near the river and feed on fish"


@pytest.fixture
def filtered_corpus(tmp_path) -> Path:
    """Many strong matches in `near/`, ten weaker ones in `far/deep/`, and a case twin."""
    root = tmp_path / "corpus"
    for n in range(40):
        folder = root / "near"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{n:02}.md").write_text(f"# Otters {n}\n\nOtters otters. {WORDS} {n}.\n")
    for n in range(10):
        folder = root / "far" / "deep"
        folder.mkdir(parents=True, exist_ok=True)
        suffix = "txt" if n % 2 else "md"
        (folder / f"f{n:02}.{suffix}").write_text(f"A note on kettles {n}; also otters.\n")
    (root / "Far").mkdir()
    (root / "Far" / "upper.md").write_text("Otters in the upper-case folder.\n")
    return root


@pytest.mark.parametrize("mode", MODES)
def test_under_returns_k_hits_from_the_folder_in_every_mode_and_backend(
    any_index, filtered_corpus, tiny_model_dir, mode
):
    Indexer(any_index, model=str(tiny_model_dir)).index_folder(filtered_corpus)
    far = str(filtered_corpus / "far")
    with Searcher(any_index) as searcher:
        unfiltered = searcher.search("otters", k=10, mode=mode).results
        # cutting the unfiltered top 10 afterwards would leave fewer than 10
        assert sum(hit.path.startswith(far + "/") for hit in unfiltered) < 10
        hits = searcher.search("otters", k=10, mode=mode, under=far).results
        assert len(hits) == 10
        assert all(hit.path.startswith(far + "/") for hit in hits)
        # case-sensitive: `far` does not take in `Far`, and a glob sees only its matches
        assert not any("/Far/" in hit.path for hit in hits)
        markdown = searcher.search("otters", k=10, mode=mode, under=far, path="*.md").results
        assert len(markdown) == 5 and all(hit.path.endswith(".md") for hit in markdown)
        text = searcher.search("otters", k=10, mode=mode, file_type="txt", under=far).results
        assert len(text) == 5 and all(hit.path.endswith(".txt") for hit in text)
        ending = searcher.search("otters", k=3, mode=mode, path="deep/f0?.md").results
        assert len(ending) == 3 and all("/far/deep/f0" in hit.path for hit in ending)
        upper = searcher.search("otters", k=10, mode=mode, under=str(filtered_corpus / "Far"))
        assert [Path(hit.path).name for hit in upper.results] == ["upper.md"]
        assert upper.to_dict()["filters"]["under"] == [str(filtered_corpus / "Far")]


def test_a_file_can_be_the_filter_and_nothing_allowed_means_no_hits(
    tmp_path, filtered_corpus, tiny_model_dir
):
    index = tmp_path / "ix"
    Indexer(index, model=str(tiny_model_dir)).index_folder(filtered_corpus)
    one = str(filtered_corpus / "near" / "n07.md")
    with Searcher(index) as searcher:
        hits = searcher.search("otters", k=5, under=one).results
        assert [hit.path for hit in hits] == [one]
        assert searcher.search("otters", under=str(tmp_path / "nowhere")).results == []


def test_each_filter_allows_exactly_the_chunks_of_its_documents_on_every_backend(
    any_index, filtered_corpus, tiny_model_dir
):
    """One filter SQL per dialect (`SearchFilter.sql`): GLOB or its regex, folders,
    types and metadata, ANDed across kinds and ORed within one."""
    from indexer.store.backends import open_store

    indexer = Indexer(any_index, model=str(tiny_model_dir))
    indexer.index_folder(filtered_corpus)
    indexer.upsert_records(
        [
            {"id": "a", "text": "Otters in a record.", "metadata": {"kind": "note", "n": 1}},
            {"id": "b", "text": "Kettles in a record.", "metadata": {"kind": "memo", "n": 1}},
        ]
    )
    root = str(filtered_corpus)
    far, deep = f"{root}/far", f"{root}/far/deep"
    markdown = {f"{deep}/f{n:02}.md" for n in range(0, 10, 2)}
    text = {f"{deep}/f{n:02}.txt" for n in range(1, 10, 2)}
    near = {f"{root}/near/n{n:02}.md" for n in range(40)}
    expected = {
        make_filter(under=far): markdown | text,
        make_filter(under=[far, f"{root}/Far"], paths="*.md"): markdown | {f"{root}/Far/upper.md"},
        make_filter(paths=["deep/f0?.md", "/nowhere/*"], types=["txt", ".MD"]): markdown,
        make_filter(types="code"): set(),
        make_filter(under=root + "/", types="md"): near | markdown | {f"{root}/Far/upper.md"},
        make_filter(paths="/*/n[0-1][^2-9].md"): {
            f"{root}/near/n{n:02}.md" for n in (0, 1, 10, 11)
        },
        make_filter(where={"kind": "note"}): {"record:a"},
        make_filter(where=["n=1"]): {"record:a", "record:b"},
        make_filter(where={"kind": "memo", "n": 2}): set(),
        make_filter(under=far, where={"kind": "note"}): set(),
    }
    store = open_store(any_index)
    try:
        with store.snapshot() as snapshot:
            for where, paths in expected.items():
                allowed = snapshot.allowed_chunks(where).tolist()  # type: ignore[attr-defined]
                found = {chunk.path for chunk in snapshot.chunks(allowed).values()}
                assert found == paths, where
                assert snapshot.chunk_count(where) == len(allowed) >= len(paths)
    finally:
        store.close()


def test_bad_filters_are_refused_in_one_line():
    with pytest.raises(InvalidQuery, match="reversed range z-a matches nothing"):
        make_filter(paths=["*.md", "[z-a]*"])
    with pytest.raises(InvalidQuery, match="never closed"):
        make_filter(paths=["notes[1"])
    with pytest.raises(InvalidQuery, match="absolute"):
        make_filter(under=["docs"])
    with pytest.raises(InvalidQuery, match="unknown file type"):
        make_filter(types=["not a type!"])
    with pytest.raises(InvalidQuery, match="non-empty"):
        make_filter(paths=[""])


def test_globs_translate_to_anchored_regular_expressions():
    import re

    pattern = glob_regex("*/docs/[^x]?.md")
    assert re.fullmatch(pattern, "/a/docs/ab.md")
    assert not re.fullmatch(pattern, "/a/docs/xb.md")
    assert not re.fullmatch(pattern, "/a/DOCS/ab.md")


GLOBS = ["[!x]", "[^x]", "[]x]", "[^]x]", "[]-x]", "[a-]", "[-a]", "[a-c-e]", "[a-c]?",
         "[[]", "[[:alpha:]]", "[[.a.]]", "[[=a=]]", "[\\]", "[\\-a]", "[#-/]", "[é-ü]",
         "*.md", "?", "a*b", "[*?]", "[$^.]", "(a|b)", "a{2}", "\\*", "[_%]"]  # fmt: skip
NAMES = ["x", "a", "b", "d", "e", "-", "]", "!", "[", "]]", "[]", ":", ".", "=", "\\", "#",
         "/", "+", "é", "ö", "ü", "ÿ", "*", "?", "$", "^", "(a|b)", "aa", "a.md", "ab", "ac",
         "a\nb", "_", "%", ""]  # fmt: skip


def test_postgresql_matches_what_sqlite_glob_matches(postgres_server):
    """Each glob, as PostgreSQL's regex, takes exactly the names SQLite's GLOB takes."""
    import sqlite3

    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(postgres_server)
    sqlite = sqlite3.connect(":memory:")
    dsn = f"host={url.host} port={url.port} user={url.username} dbname={url.database}"
    with psycopg.connect(dsn) as postgres:
        for glob in GLOBS:
            regex = glob_regex(glob)
            for name in NAMES:
                [[expected]] = sqlite.execute("SELECT ? GLOB ?", (name, glob)).fetchall()
                [[found]] = postgres.execute("SELECT %s ~ %s", (name, regex)).fetchall()
                assert found == bool(expected), (glob, regex, name)
    sqlite.close()


@pytest.mark.parametrize("glob", ["[z-a]", "docs/[b-a]*.md", "[[:nope:]]", "[[.x.]]"])
def test_a_malformed_glob_is_a_bad_query_on_every_backend(any_index, notes, tiny_model_dir, glob):
    """A reversed range (or what PostgreSQL's regex would refuse) is the user's mistake:
    exit 2 on the command line, never a broken index (exit 1)."""
    from click.testing import CliRunner

    from search.cli import cli

    Indexer(any_index, model=str(tiny_model_dir)).index_folder(notes)
    result = CliRunner().invoke(cli, ["query", "bank", "--index", str(any_index), "--path", glob])
    if glob.startswith("[["):  # a plain set of characters, as SQLite's GLOB reads it
        assert result.exit_code == 0, result.output
        assert (
            '"results"'
            in CliRunner()
            .invoke(cli, ["query", "bank", "--index", str(any_index), "--path", glob, "--json"])
            .stdout
        )
    else:
        assert result.exit_code == 2, result.output
        assert "reversed range" in result.stderr and "Traceback" not in result.output


def test_a_malformed_glob_is_a_422_over_http(any_index, notes, tiny_model_dir, tmp_path):
    import httpx

    from tests.support.serving import running_server

    Indexer(any_index, model=str(tiny_model_dir)).index_folder(notes)
    with running_server(any_index, tmp_path / "server.log") as server:
        answer = httpx.get(f"{server.url}/search", params={"q": "bank", "path": "[z-a]"})
        posted = httpx.post(f"{server.url}/search", json={"q": "bank", "path": ["[z-a]"]})
        fine = httpx.get(f"{server.url}/search", params={"q": "bank", "path": "[[:x:]]"})
    assert answer.status_code == 422 and "reversed range" in answer.json()["detail"]
    assert posted.status_code == 422, posted.text
    assert fine.status_code == 200, fine.text


def test_the_rst_type_takes_in_sphinx_source_copies_and_txt_leaves_them(
    any_index, tmp_path, fast_model
):
    """Sphinx copies each page's source as NAME.rst.txt, which is read as reStructuredText:
    `--type rst` missed those files and `--type txt` took them in."""
    from indexer.store.backends import open_store

    root = tmp_path / "docs"
    root.mkdir()
    (root / "intro.rst.txt").write_text("Intro\n=====\n\nOtters in a source copy.\n")
    (root / "guide.rst").write_text("Guide\n=====\n\nOtters in reStructuredText.\n")
    (root / "notes.txt").write_text("Otters in plain text.\n")
    (root / "readme.md").write_text("# Readme\n\nOtters in Markdown.\n")
    Indexer(any_index, model=fast_model).index_folder(root)
    source, guide = f"{root}/intro.rst.txt", f"{root}/guide.rst"
    expected = {
        make_filter(types="rst"): {source, guide},
        make_filter(types="txt"): {f"{root}/notes.txt"},
        make_filter(types=".txt"): {f"{root}/notes.txt"},
        make_filter(types=["rst", "txt"]): {source, guide, f"{root}/notes.txt"},
        make_filter(types=["md", "txt"]): {f"{root}/notes.txt", f"{root}/readme.md"},
    }
    store = open_store(any_index)
    try:
        with store.snapshot() as snapshot:
            for where, paths in expected.items():
                allowed = snapshot.allowed_chunks(where).tolist()  # type: ignore[attr-defined]
                assert {chunk.path for chunk in snapshot.chunks(allowed).values()} == paths, where
    finally:
        store.close()
