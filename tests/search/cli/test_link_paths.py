"""Paths with links on the command line: the path a hit shows is the path every command
takes back (`similar`, `--under`, `remove`), whether a link is the root, a file in it,
or a folder above it; and `index` says which links it did not follow."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from search.cli import cli


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(arg) for arg in args])


def hits(index: Path, words: str, *options: str) -> list[str]:
    result = invoke("query", words, "--index", index, "--mode", "lexical", "--json", *options)
    assert result.exit_code == 0, result.output
    return sorted(hit["path"] for hit in json.loads(result.stdout)["results"])


def releases(tmp_path: Path) -> Path:
    """releases/v1 with a note and a link to a note in a hidden folder (which the walk
    skips: only the link holds that text), and `current` linking to v1: the link."""
    v1 = tmp_path / "releases" / "v1"
    (v1 / ".drafts").mkdir(parents=True)
    (v1 / ".drafts" / "herons.md").write_text("# Herons\n\nHerons wade in the river.\n")
    (v1 / "otters.md").write_text("# Otters\n\nOtters float in the river on their backs.\n")
    (v1 / "herons.md").symlink_to(".drafts/herons.md")
    current = tmp_path / "current"
    current.symlink_to("releases/v1", target_is_directory=True)
    return current


def test_the_path_a_hit_shows_is_taken_by_similar_under_and_remove(tmp_path, fast_model):
    current = releases(tmp_path)
    index = tmp_path / "ix"
    indexed = invoke("index", current, "--index", index, "--model", fast_model, "--json")
    assert indexed.exit_code == 0, indexed.output
    shown = hits(index, "river")
    assert shown == [str(current / "herons.md"), str(current / "otters.md")]
    for path in shown:
        similar = invoke("similar", path, "--index", index, "--json")
        assert similar.exit_code == 0, similar.output
        assert json.loads(similar.stdout)["item"]["path"] == path
        assert hits(index, "river", "--under", path) == [path]
    assert hits(index, "river", "--under", current) == shown
    removed = invoke("remove", current / "herons.md", "--index", index, "--json")
    assert removed.exit_code == 0, removed.output
    assert json.loads(removed.stdout)["path"] == str(current / "herons.md")
    assert hits(index, "river") == [str(current / "otters.md")]


def test_relative_paths_through_a_link_name_what_the_index_stores(
    tmp_path, fast_model, monkeypatch
):
    current = releases(tmp_path)
    index = tmp_path / "ix"
    monkeypatch.chdir(tmp_path)
    assert invoke("index", "current", "--index", index, "--model", fast_model).exit_code == 0
    assert hits(index, "otters", "--under", "current") == [str(current / "otters.md")]
    similar = invoke("similar", "current/otters.md", "--index", index, "--json")
    assert similar.exit_code == 0, similar.output
    assert json.loads(similar.stdout)["item"]["path"] == str(current / "otters.md")
    # A folder above the root given through a link still names the same documents.
    (tmp_path / "above").symlink_to(tmp_path, target_is_directory=True)
    assert hits(index, "otters", "--under", "above/current") == [str(current / "otters.md")]


def test_a_folder_indexed_through_a_link_in_its_path_is_found_by_either_spelling(
    tmp_path, fast_model
):
    """`index real-parent-link/docs`: the folders above the root are resolved (the root
    is recorded as it always was), and either spelling finds its documents."""
    docs = tmp_path / "real" / "docs"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text("Kingfishers dive from the bank.\n")
    (tmp_path / "parent-link").symlink_to(tmp_path / "real", target_is_directory=True)
    index = tmp_path / "ix"
    given = tmp_path / "parent-link" / "docs"
    assert invoke("index", given, "--index", index, "--model", fast_model).exit_code == 0
    assert hits(index, "kingfishers") == [str(docs / "a.md")]
    assert hits(index, "kingfishers", "--under", given) == [str(docs / "a.md")]
    assert hits(index, "kingfishers", "--under", given / "a.md") == [str(docs / "a.md")]


def test_index_names_each_link_it_does_not_follow_and_follows_them_when_told(tmp_path, fast_model):
    secret = tmp_path / "home" / "id_rsa.txt"
    secret.parent.mkdir()
    secret.write_text("BEGIN PRIVATE KEY zebrafinch quokka END PRIVATE KEY\n")
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "README.md").write_text("Herons wade in the shallow river.\n")
    link = clone / "setup-notes.txt"
    link.symlink_to(os.path.relpath(secret, clone))
    index = tmp_path / "ix"
    result = invoke("index", clone, "--index", index, "--model", fast_model, "--json")
    assert result.exit_code == 0, result.output
    reason = (
        f"a link to {secret}, outside {clone}: not followed "
        "(--follow-links-outside follows such links)"
    )
    summary = json.loads(result.stdout)
    assert summary["skipped_files"] == [{"path": str(link), "reason": reason}]
    assert summary["rules"]["follow_links_outside"] is False
    assert f"skipped {link}: {reason}" in result.stderr
    assert hits(index, "zebrafinch") == []
    told = invoke("index", clone, "--index", index, "--follow-links-outside")
    assert told.exit_code == 0, told.output
    assert "Rules remembered for this folder: follow links outside." in told.stdout
    assert hits(index, "zebrafinch") == [str(link)]
    similar = invoke("similar", link, "--index", index, "--json")
    assert json.loads(similar.stdout)["item"]["path"] == str(link)
    stopped = invoke("index", clone, "--index", index, "--no-follow-links-outside")
    assert stopped.exit_code == 0 and "1 removed" in stopped.stdout
    assert hits(index, "zebrafinch") == []


def test_a_file_link_is_taken_as_itself_not_as_its_target(tmp_path, fast_model):
    """The walk indexes a file link under its own path; `similar LINK` and `--under
    LINK` name that document, not the one at its target."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("# Herons\n\nHerons wade in the shallow river.\n")
    (docs / "herons-link.md").symlink_to("herons.md")
    (docs / "otters.md").write_text("# Otters\n\nOtters float in the river.\n")
    index = tmp_path / "ix"
    assert invoke("index", docs, "--index", index, "--model", fast_model).exit_code == 0
    link = str(docs / "herons-link.md")
    assert hits(index, "herons", "--under", link) == [link]
    similar = invoke("similar", link, "--index", index, "--json")
    assert similar.exit_code == 0, similar.output
    assert json.loads(similar.stdout)["item"]["path"] == link


def test_a_folder_of_only_links_to_outside_is_refused_saying_so(tmp_path, fast_model):
    outside = tmp_path / "outside.md"
    outside.write_text("Herons wade in the shallow river.\n")
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "notes.md").symlink_to(outside)
    result = invoke("index", clone, "--index", tmp_path / "ix", "--model", fast_model)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"Error: {clone}: no files to index here, only 1 link(s) that lead outside it, not "
        "followed (--follow-links-outside follows links to files); nothing was changed"
    )
    records = tmp_path / "r.jsonl"
    records.write_text('{"id": "a", "text": "x"}\n')
    refused = invoke("index", "--jsonl", records, "--follow-links-outside", "--index", tmp_path)
    assert refused.exit_code == 2 and "--follow-links-outside and --forget-rules apply" in (
        refused.stderr
    )


def test_the_hint_for_an_empty_under_names_the_path_as_given(tmp_path, fast_model):
    current = releases(tmp_path)
    index = tmp_path / "ix"
    assert invoke("index", current, "--index", index, "--model", fast_model).exit_code == 0
    result = invoke("query", "river", "--index", index, "--under", current / "nothing")
    assert result.exit_code == 0
    assert f"hint: nothing indexed is under {current / 'nothing'};" in result.stderr
    assert "releases" not in result.stderr
