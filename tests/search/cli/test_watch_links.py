"""`ctxsearch watch` and links, and replacements that keep a file's size and mtime: a
link to outside the folder that appears is not indexed (it is said, once); the targets of
links the folder's rules follow outside it are looked at; a watched folder given as a
link follows the link when it is swapped; `cp -p` over a file reaches the index."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from search.cli import cli
from tests.search.cli.test_watch import found, start_watch


def test_a_link_to_outside_that_appears_is_not_indexed(tmp_path, fast_model):
    secret = tmp_path / "home" / "id_rsa.txt"
    secret.parent.mkdir()
    secret.write_text("BEGIN PRIVATE KEY zebrafinch quokka END PRIVATE KEY\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("Herons wade in shallow water.")
    index = tmp_path / "ix"
    watched = start_watch(docs, index, fast_model)
    try:
        watched.until(lambda: found(index, "herons") == ["herons.md"], "the first run")
        link = docs / "setup-notes.txt"
        link.symlink_to(secret)
        watched.until(lambda: f"skipped {link}: a link to {secret}" in watched.stderr(), "the skip")
        (docs / "otters.md").write_text("Otters float on their backs.")
        watched.until(lambda: found(index, "otters") == ["otters.md"], "the next file")
        assert found(index, "zebrafinch") == []
        assert watched.stderr().count(f"skipped {link}") == 1  # said once, not every run
        runs = [json.loads(line) for line in watched.out.read_text().splitlines()]
        assert any(item["path"] == str(link) for item in runs[-1]["skipped_files"])
    finally:
        watched.stop()


def test_an_edit_of_a_followed_link_target_outside_the_folder_is_indexed(tmp_path, fast_model):
    """With the folder's runs told to follow links outside it, the targets of those links
    are looked at too: an edit there reaches the index without a change in the folder."""
    outside = tmp_path / "shared" / "glossary.md"
    outside.parent.mkdir()
    outside.write_text("Glossary: a heron is a wading bird.\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "glossary.md").symlink_to(outside)
    index = tmp_path / "ix"
    told = CliRunner().invoke(
        cli, ["index", str(docs), "--index", str(index), "--model", fast_model,
              "--follow-links-outside"],
    )  # fmt: skip
    assert told.exit_code == 0, told.output
    watched = start_watch(docs, index, fast_model)
    try:
        watched.until(lambda: watched.runs() >= 1, "the first run")
        outside.write_text("Glossary: a cormorant dries its wings in the sun.\n")
        watched.until(lambda: found(index, "cormorant") == ["glossary.md"], "the target's edit")
        assert found(index, "heron") == []
    finally:
        watched.stop()


def test_a_watched_folder_given_as_a_link_follows_the_link_when_it_is_swapped(tmp_path, fast_model):
    """`watch current`, then `ln -sfn releases/v2 current.tmp && mv -T current.tmp
    current`: the watch indexes v2 under the same root and v1 leaves the index."""
    for version, words in (("v1", "albatross petrel"), ("v2", "cormorant gannet")):
        folder = tmp_path / "releases" / version
        folder.mkdir(parents=True)
        (folder / "notes.md").write_text(f"Seabirds: {words}.\n")
    current = tmp_path / "current"
    current.symlink_to("releases/v1", target_is_directory=True)
    index = tmp_path / "ix"
    watched = start_watch(current, index, fast_model)
    try:
        watched.until(lambda: found(index, "albatross") == ["notes.md"], "the first run")
        staged = tmp_path / "current.tmp"
        staged.symlink_to("releases/v2", target_is_directory=True)
        os.replace(staged, current)
        watched.until(lambda: found(index, "cormorant") == ["notes.md"], "the swap")
        assert found(index, "albatross") == []
        (tmp_path / "releases" / "v2" / "more.md").write_text("Puffins dive for fish.\n")
        watched.until(lambda: found(index, "puffins") == ["more.md"], "an edit in v2")
    finally:
        watched.stop()
    listed = CliRunner().invoke(cli, ["ls", "--index", str(index), "--json"])
    assert [folder["root"] for folder in json.loads(listed.stdout)] == [str(current)]


def test_a_copy_that_keeps_size_and_mtime_reaches_the_index(tmp_path, fast_model):
    docs = tmp_path / "docs"
    docs.mkdir()
    notes = docs / "notes.txt"
    notes.write_text("Herons wade in the shallow river and wait for fish.\n")
    index = tmp_path / "ix"
    watched = start_watch(docs, index, fast_model)
    try:
        watched.until(lambda: found(index, "herons") == ["notes.txt"], "the first run")
        old = notes.stat()
        notes.write_text("Otters float on their backs and crack open mussels.\n")
        os.utime(notes, ns=(old.st_atime_ns, old.st_mtime_ns))
        assert Path(notes).stat().st_size == old.st_size
        watched.until(lambda: found(index, "otters") == ["notes.txt"], "the copy")
    finally:
        watched.stop()
