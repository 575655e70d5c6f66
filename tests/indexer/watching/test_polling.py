"""What a watch that polls notes of its folders (`polling.look`): writes under the tree
and edits of a linked file's target change it; reads, and what happens in a folder a
link leads to, do not; links in loops cannot trap it. (The polling watch as a process
is tested in tests/search/cli/test_watch.py.)"""

from __future__ import annotations

import os
from pathlib import Path

from indexer.watching.polling import look


def tree(tmp_path: Path) -> Path:
    """docs/ with a file, a file in a subfolder, a link to a file outside, links to
    itself, to docs, to the folder above and to a folder outside."""
    docs = tmp_path / "docs"
    (docs / "birds").mkdir(parents=True)
    (docs / "herons.md").write_text("Herons wade in shallow water.")
    (docs / "birds" / "egrets.md").write_text("Egrets follow cattle.")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "ibises.md").write_text("Ibises probe the mud.")
    (docs / "ibises.md").symlink_to(tmp_path / "elsewhere" / "ibises.md")
    (docs / "loop").symlink_to("loop")
    (docs / "again").symlink_to(".")
    (docs / "up").symlink_to("..")
    (docs / "outside").symlink_to(tmp_path / "elsewhere")
    return docs


def changed(before: dict, after: dict) -> set[str]:
    """The names (relative to docs) whose entries came, went or differ."""
    paths = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    return {Path(path).name for path in paths}


def test_a_look_goes_past_links_in_loops_and_never_into_a_folder_link(tmp_path):
    docs = tree(tmp_path)
    seen = look([docs])
    names = {str(Path(path).relative_to(docs)) for path in seen}
    assert names == {
        "herons.md",
        "birds",
        "birds/egrets.md",
        "ibises.md",
        "loop",
        "again",
        "up",
        "outside",
    }


def test_writes_under_the_tree_and_to_a_linked_files_target_change_the_look(tmp_path):
    docs = tree(tmp_path)
    before = look([docs])
    (docs / "birds" / "egrets.md").write_text("Egrets and storks follow cattle.")
    (tmp_path / "elsewhere" / "ibises.md").write_text("Ibises and spoonbills probe the mud.")
    (docs / "birds" / "storks.md").write_text("Storks nest on roofs.")
    (docs / "herons.md").unlink()
    assert changed(before, look([docs])) == {"egrets.md", "ibises.md", "storks.md", "herons.md"}


def test_a_replacement_of_the_same_size_and_mtime_changes_the_look(tmp_path):
    """As `cp -p` or `rsync -t` leave it: only the ctime and inode tell."""
    docs = tree(tmp_path)
    herons = docs / "herons.md"
    kept = herons.stat()
    before = look([docs])
    replacement = tmp_path / "replacement.md"
    replacement.write_text("Herons WADE in shallow water.")
    os.utime(replacement, ns=(kept.st_atime_ns, kept.st_mtime_ns))
    replacement.replace(herons)
    assert changed(before, look([docs])) == {"herons.md"}


def test_reads_and_changes_where_a_folder_link_leads_leave_the_look_as_it_was(tmp_path):
    """The runs follow no folder link, so what happens where one leads (here the folder
    above, where an index may live, and a folder outside) must not bring a run, or
    each run's own writes would bring the next one."""
    docs = tree(tmp_path)
    before = look([docs])
    (docs / "herons.md").read_text()
    (tmp_path / "elsewhere" / "storks.md").write_text("Storks nest on roofs.")
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / "store.sqlite").write_text("rows")
    assert changed(before, look([docs])) == set()
