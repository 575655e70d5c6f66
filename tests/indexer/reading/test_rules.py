"""--exclude/--include remembered per root, and the default excludes for web assets."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from indexer import Indexer
from indexer.reading.rules import RootRules
from indexer.reading.sources import walk_folder
from indexer.store.backends import open_store
from search.cli import cli


def write(folder: Path, names: list[str]) -> Path:
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"function note() {{ return 'otters and herons near {name}'; }}\n")
    return folder


def indexed(target) -> list[str]:
    store = open_store(target)
    try:
        with store.snapshot() as snapshot:  # chunk ids are small here: read them all
            chunks = snapshot.chunks(range(1, 1000)).values()
        return sorted({Path(chunk.path).name for chunk in chunks})
    finally:
        store.close()


def test_web_assets_are_left_out_by_default_and_can_be_brought_back(tmp_path):
    docs = write(
        tmp_path / "docs",
        [
            "index.html",
            "guide.md",
            "_static/doctools.js",
            "assets/js/bundle.js",
            "css/theme.css",
            "vendor/lib.min.js",
            "app.js.map",
            "_sources/guide.rst.txt",
            "src/app.js",
        ],
    )
    names = sorted(source.path.name for source in walk_folder(docs))
    assert names == ["app.js", "guide.md", "index.html"]
    everything = RootRules(default_excludes=False)
    assert len(list(walk_folder(docs, rules=everything))) == 8  # .map has no reader
    some = RootRules(include=("*.md", "_static/*.js"))
    assert sorted(s.path.name for s in walk_folder(docs, rules=some)) == ["doctools.js", "guide.md"]


def test_exclude_and_include_are_remembered_per_root(any_index, tmp_path, tiny_model_dir):
    docs = write(tmp_path / "docs", ["a.md", "b.txt", "old/c.md", "old/d.txt"])
    other = write(tmp_path / "other", ["e.md", "f.txt"])
    indexer = Indexer(any_index, model=str(tiny_model_dir))
    summary = indexer.index_folder(docs, exclude=["old/"])
    assert summary.rules["exclude"] == ["old/"] and indexed(any_index) == ["a.md", "b.txt"]
    indexer.index_folder(other, include=["*.md"])
    assert indexed(any_index) == ["a.md", "b.txt", "e.md"]
    (docs / "old" / "g.md").write_text("a new file in an excluded folder\n")
    again = indexer.index_folder(docs)  # nothing given: the remembered rules hold
    assert again.rules["exclude"] == ["old/"] and again.added == 0
    assert indexed(any_index) == ["a.md", "b.txt", "e.md"]
    narrowed = indexer.index_folder(docs, include=["*.md"])  # excluded files are removed
    assert narrowed.removed == 1 and indexed(any_index) == ["a.md", "e.md"]
    reset = indexer.index_folder(docs, forget_rules=True)
    assert reset.rules == {
        "exclude": [],
        "include": [],
        "default_excludes": True,
        "follow_links_outside": False,
    }
    assert indexed(any_index) == ["a.md", "b.txt", "c.md", "d.txt", "e.md", "g.md"]
    assert indexer.index_folder(other).rules["include"] == ["*.md"]


def test_the_command_line_remembers_and_reports_the_rules(tmp_path, tiny_model_dir):
    docs = write(tmp_path / "docs", ["a.md", "notes/b.md"])
    index = str(tmp_path / "ix")
    runner = CliRunner()
    base = ["index", str(docs), "--index", index, "--model", str(tiny_model_dir), "--json"]
    first = runner.invoke(cli, [*base, "--exclude", "notes/"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["rules"]["exclude"] == ["notes/"]
    second = runner.invoke(cli, ["index", str(docs), "--index", index])
    assert second.exit_code == 0 and "exclude notes/" in second.stdout
    assert indexed(index) == ["a.md"]
