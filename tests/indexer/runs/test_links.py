"""Links in an indexed folder: what a link may bring into the index.

A link (to a file or a folder) whose target lies outside the root being indexed is not
followed unless the root's runs are told to (`follow_links_outside`, remembered like
--exclude); it is skipped with its reason. Links that stay inside the root work as
before. A root given as a link is recorded as the link and followed afresh at each run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexer import Indexer
from indexer.errors import DocumentNotFound, UnreadableFile
from indexer.reading.sources import read_document, walk_folder
from indexer.store.backends import describe_store
from search.engine import Searcher
from search.mcp_server.read_tool import read_document as read_document_text
from tests.support.oracle import index_fingerprint

SECRET = "BEGIN PRIVATE KEY zebrafinch quokka marmoset END PRIVATE KEY"


def cloned(tmp_path: Path) -> tuple[Path, Path]:
    """A cloned repository whose `docs/setup-notes.txt` links to a key outside it
    (committed as a link), and a readme: (clone, the secret file)."""
    secret = tmp_path / "home" / ".ssh" / "id_rsa.txt"
    secret.parent.mkdir(parents=True)
    secret.write_text(SECRET + "\n")
    clone = tmp_path / "work" / "clone"
    (clone / "docs").mkdir(parents=True)
    (clone / "README.md").write_text("# Clone\n\nHerons wade in the shallow river.\n")
    (clone / "docs" / "setup-notes.txt").symlink_to(os.path.relpath(secret, clone / "docs"))
    return clone, secret


def texts(target) -> str:
    """Every stored passage's text, joined."""
    documents = index_fingerprint(target).documents.values()
    return "\n".join(chunk.text for document in documents for chunk in document.chunks)


def found(target, words: str) -> list[str]:
    """The paths a lexical search finds."""
    with Searcher(target) as searcher:
        return sorted(hit.path for hit in searcher.search(words, mode="lexical", k=20).results)


def test_a_file_link_to_outside_the_root_is_skipped_with_its_reason(
    any_index, tmp_path, fast_model
):
    clone, secret = cloned(tmp_path)
    summary = Indexer(any_index, model=fast_model).index_folder(clone)
    link = clone / "docs" / "setup-notes.txt"
    assert [(skipped.path, skipped.reason) for skipped in summary.skipped_files] == [
        (
            str(link),
            f"a link to {secret}, outside {clone}: not followed "
            "(--follow-links-outside follows such links)",
        )
    ]
    assert (summary.added, summary.skipped) == (1, 1)
    assert found(any_index, "zebrafinch") == []
    assert "zebrafinch" not in texts(any_index)


def test_a_folder_link_to_outside_the_root_is_skipped_with_its_reason(tmp_path, fast_model):
    clone, secret = cloned(tmp_path)
    (clone / "keys").symlink_to(secret.parent, target_is_directory=True)
    (clone / "guide").mkdir()
    (clone / "guide" / "a.md").write_text("Otters float on their backs.\n")
    (clone / "guide-link").symlink_to(clone / "guide", target_is_directory=True)
    summary = Indexer(tmp_path / "ix", model=fast_model).index_folder(clone)
    skipped = {Path(item.path).name: item.reason for item in summary.skipped_files}
    assert skipped["keys"] == (
        f"a link to the folder {secret.parent}, outside {clone}: not followed "
        "(links to folders never are; index that folder on its own)"
    )
    assert "guide-link" not in skipped  # a folder link inside the root: not followed, as ever
    assert found(tmp_path / "ix", "zebrafinch") == []


def test_links_that_stay_inside_the_root_keep_working(tmp_path, fast_model):
    clone, _secret = cloned(tmp_path)
    (clone / "docs" / "readme-link.md").symlink_to("../README.md")
    summary = Indexer(tmp_path / "ix", model=fast_model).index_folder(clone)
    assert summary.added == 2 and [s.path for s in summary.skipped_files] == [
        str(clone / "docs" / "setup-notes.txt")
    ]
    assert sorted(index_fingerprint(tmp_path / "ix").documents) == [
        str(clone / "README.md"),
        str(clone / "docs" / "readme-link.md"),
    ]


def test_following_links_outside_is_an_explicit_choice_remembered_for_the_root(
    any_index, tmp_path, fast_model
):
    clone, _secret = cloned(tmp_path)
    link = str(clone / "docs" / "setup-notes.txt")
    indexer = Indexer(any_index, model=fast_model)
    followed = indexer.index_folder(clone, follow_links_outside=True)
    assert followed.added == 2 and followed.skipped_files == []
    assert followed.rules["follow_links_outside"] is True
    assert found(any_index, "zebrafinch") == [link]
    again = indexer.index_folder(clone)  # remembered
    assert (again.unchanged, again.removed, again.rules["follow_links_outside"]) == (2, 0, True)
    # Told not to any more: the document it brought in leaves the index.
    with Searcher(any_index) as searcher:
        assert SECRET in read_document_text(searcher, link)["text"]  # MCP `read`
    stopped = indexer.index_folder(clone, follow_links_outside=False)
    assert (stopped.removed, stopped.skipped) == (1, 1)
    assert found(any_index, "zebrafinch") == []
    assert "zebrafinch" not in texts(any_index)
    with Searcher(any_index) as searcher, pytest.raises(DocumentNotFound):
        read_document_text(searcher, link)
    forgot = indexer.index_folder(clone, follow_links_outside=True)
    assert forgot.added == 1
    assert indexer.index_folder(clone, forget_rules=True).removed == 1


def test_a_link_retargeted_outside_the_root_leaves_the_index_on_the_next_run(
    any_index, tmp_path, fast_model
):
    """A link indexed while it pointed inside the root, then pointed at a file outside
    it: the next run removes its document, and the outside text never comes in."""
    clone, secret = cloned(tmp_path)
    link = clone / "docs" / "setup-notes.txt"
    link.unlink()
    link.symlink_to("../README.md")
    indexer = Indexer(any_index, model=fast_model)
    assert indexer.index_folder(clone).added == 2
    link.unlink()
    link.symlink_to(secret)
    summary = indexer.index_folder(clone)
    assert (summary.removed, summary.skipped) == (1, 1)
    assert found(any_index, "zebrafinch") == [] and "zebrafinch" not in texts(any_index)
    with Searcher(any_index) as searcher, searcher.store.snapshot() as snapshot:
        assert snapshot.documents_at(str(link)) == []


def test_a_link_swapped_between_the_walk_and_the_read_is_not_read(tmp_path):
    """The walk saw a link inside the root; before its file is read it points outside:
    the read refuses it (the file opened is checked, not the path looked at)."""
    clone, secret = cloned(tmp_path)
    link = clone / "docs" / "setup-notes.txt"
    link.unlink()
    link.symlink_to("../README.md")
    (source,) = [s for s in walk_folder(clone) if s.path == link]
    link.unlink()
    link.symlink_to(secret)
    with pytest.raises(UnreadableFile, match=f"outside {clone}"):
        read_document(source)
    # A file the walk saw as a file, made a link to outside before it is read: the same.
    readme = clone / "README.md"
    (source,) = [s for s in walk_folder(clone) if s.path == readme]
    readme.unlink()
    readme.symlink_to(secret)
    with pytest.raises(UnreadableFile, match=f"outside {clone}"):
        read_document(source)


def test_the_walk_reports_each_link_it_does_not_follow(tmp_path):
    clone, _secret = cloned(tmp_path)
    skipped: list[tuple[Path, str]] = []
    found_paths = [
        s.path for s in walk_folder(clone, on_skipped=lambda p, why: skipped.append((p, why)))
    ]
    assert found_paths == [clone / "README.md"]
    assert [path for path, _ in skipped] == [clone / "docs" / "setup-notes.txt"]


def test_a_root_given_as_a_link_is_recorded_as_the_link_and_followed_at_each_run(
    any_index, tmp_path, fast_model
):
    """`ln -sfn releases/v2 current.tmp && mv -T current.tmp current`, then `index
    current`: the same root is brought up to date (no new root for releases/v2), and
    nothing of v1 is left."""
    releases = tmp_path / "releases"
    for version, words in (("v1", "albatross petrel"), ("v2", "cormorant gannet")):
        (releases / version).mkdir(parents=True)
        (releases / version / "notes.md").write_text(f"# Notes\n\nSeabirds: {words}.\n")
        (releases / version / f"only-{version}.md").write_text(f"Only in {version}: {words}.\n")
    current = tmp_path / "current"
    current.symlink_to("releases/v1", target_is_directory=True)
    indexer = Indexer(any_index, model=fast_model)
    indexer.index_folder(current)
    assert found(any_index, "albatross") == [str(current / "notes.md"), str(current / "only-v1.md")]
    swapped = tmp_path / "current.tmp"
    swapped.symlink_to("releases/v2", target_is_directory=True)
    os.replace(swapped, current)
    summary = indexer.index_folder(current)
    assert (summary.added, summary.updated, summary.removed) == (1, 1, 1)
    roots = [folder["root"].split(":")[-1] for folder in describe_store(any_index)["folders"]]
    assert roots == [str(current)]
    assert found(any_index, "albatross") == []
    assert found(any_index, "cormorant") == [str(current / "notes.md"), str(current / "only-v2.md")]


def test_a_folder_indexed_through_a_root_given_as_a_link_nests_in_it(
    any_index, tmp_path, fast_model
):
    """`index current`, then `index current/guide --exclude 'draft*'`: the second root is
    recorded under the link, nested in `current` (as a fresh index of the same two roots
    has it), and a swap of the link carries both."""
    releases = tmp_path / "releases"
    for version, words in (("v1", "albatross"), ("v2", "cormorant")):
        (releases / version / "guide").mkdir(parents=True)
        (releases / version / "index.md").write_text(f"Index of {words}.\n")
        (releases / version / "guide" / "birds.md").write_text(f"Guide to {words}.\n")
        (releases / version / "guide" / "draft-1.md").write_text(f"Draft on {words}.\n")
    current = tmp_path / "current"
    current.symlink_to("releases/v1", target_is_directory=True)
    indexer = Indexer(any_index, model=fast_model)
    indexer.index_folder(current)
    nested = indexer.index_folder(current / "guide", exclude=["draft*"])
    assert nested.removed == 1  # the draft, which is the nested root's to leave out
    roots = [folder["root"].split(":")[-1] for folder in describe_store(any_index)["folders"]]
    assert roots == [str(current), str(current / "guide")]
    os.replace(_link_to(tmp_path / "current.tmp", "releases/v2"), current)
    summary = indexer.index_folder(current)
    assert summary.nested_roots == [str(current / "guide")]
    assert sorted(index_fingerprint(any_index).documents) == [
        str(current / "guide" / "birds.md"),
        str(current / "index.md"),
    ]
    assert found(any_index, "albatross") == []


def _link_to(link: Path, target: str) -> Path:
    link.symlink_to(target, target_is_directory=True)
    return link
