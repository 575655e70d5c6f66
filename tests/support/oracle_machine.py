"""The oracle machine: Hypothesis generates what a user does to folders and an index, and
after every run the index must equal a fresh index of the same folders (`tests.support.oracle`).

Rules change a temporary tree (files created, edited at the start, end or middle,
deleted, moved, renamed, given another extension; their structure edited: a heading made
a line and back, its level changed, a section started or moved, the text laid out as
another kind under the same name; files turned into data (a base64 blob) and back,
replaced with other words of the same size and given back their mtime; folders made,
moved and deleted; symlinks to files and folders inside and outside the tree, dangling
ones and loops, swapped in one step, a root that is a symlink swapped to another
release; hard links; case-sibling and non-UTF-8 names), and the index (runs of the
long-lived writer, of a new `Indexer` and of `ctxsearch index` with remembered
--exclude rules, roots nested in roots (`w/sub` indexed on its own, then `w`),
`remove`, records upserted and deleted, a `ctxsearch watch` process (changes under a
nested root included), a run signalled with SIGKILL or SIGINT at a named point or any
statement, the index removed and built again under the running writer, which writes
just before and just after). What the user did is replayed onto the tree as it is
into a fresh index, the oracle, and compared:

- after a run of a root: the documents under it (and the records) equal the oracle's;
- after an interrupted run: the index verifies, and holds what it held before or what
  the run would have published; the next run brings it to the oracle;
- after `remove PATH`: the index is what it was, less the documents at or under PATH;
- after records change: the records equal the oracle's, and a `where` filter finds the
  same records written as the command line writes it (`year=2023`), in Python and
  through `ctxsearch query --where`, as given in JSON;
- at the end of each example (and when the `check_everything` rule says so), every root
  is brought up to date and the whole index equals the oracle: documents, chunks,
  vectors, `verify`, and the hits of fixed queries in every mode.

The oracle is the product itself, indexing afresh; so after every run the machine also
checks what the files themselves say, whatever a fresh index holds: every passage's
text is its document's text at its offsets (a record's text, a file's as its reader
reads it), a file of data has no document, and no document resolves outside the roots
it is under, nor holds the word only the files outside the tree hold (`SECRET`).

Some rules exercise defects known when the machine was written (`KNOWN_DEFECTS`); they
run only where a test enables them (the tests that expect them to fail, until fixed).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from indexer import Indexer
from indexer.errors import IndexLocked, IndexNotFound, UnreadableFile
from indexer.faults import KILL_POINTS
from indexer.reading.sources import SourceFile, path_text, read_document
from indexer.store.backends import is_database_url, store_exists
from indexer.store.base import Target
from tests.support import oracle_tree as tree_ops
from tests.support.oracle import (
    DATA,
    IndexPrint,
    Replay,
    assert_same_hits,
    build_fresh_index,
    differences,
    index_fingerprint,
    passage_mismatches,
)
from tests.support.oracle_tree import (
    EXCLUDES,
    FOLDERS,
    KINDS,
    LINKED_ROOT,
    NAMES,
    RELEASES,
    ROOTS,
    SECRET,
    STRUCTURE_EDITS,
)

ROOT = Path(__file__).resolve().parents[2]
PRECISION = "fp32"  # the reference; the watch process computes in "auto" (see the tests)
# The index under test fills its contextual vectors two passages a publish, so that
# interruptions land between the fill's batches (the oracle's runs publish them at once).
FILL_BATCH_CHUNKS = 2

KNOWN_DEFECTS = {
    "pg-public": "item 1: an index at ?index=public and one at the default schema see "
    "each other's rows",
    "replaced-index": "item 2: a writer keeps the encoders of an index removed and built "
    "again with --pooling cls",
    "interrupt-after-commit": "item 3: a SIGINT at any statement of the publish (one just "
    "after the commit deletes the new generation's files)",
    "odd-index-path": "item 4: an index folder whose path holds ? %41 # (pasted into a SQLite URL)",
    "nested-roots": "item 5: a run of a folder leaves the roots nested in it as they were "
    "(changes under them never indexed, a renamed parent's old paths kept)",
    "watch-recreated": "item 6: watch goes blind when its folder is deleted and made again",
    "move-reader": "item 7: a rename that changes only the extension is taken as a move "
    "and keeps the old reader's text",
    "remove-link": "item 8: `remove LINK` removes the document of the link's target (and "
    "`remove LOOP`, a symlink loop, ends in a traceback: RuntimeError 'Symlink loop')",
    "where-float": "item 9: --where year=2023.0 finds nothing where JSON's 2023.0 matches",
    # Found by this machine (not in the list):
    "watch-non-utf8": "watch dies with a traceback (watchfiles: 'Unable to decode path') "
    "as soon as a file whose name is not UTF-8 is read or changed in its folder (`cat` "
    "of it will do); nothing after is indexed",
    "first-run-killed": "a new index killed while it saves its empty spaces is left "
    "an index that does not open ('its first run was interrupted: run `ctxsearch index` "
    "again'), `verify` INCONSISTENT, and `ctxsearch index` then refuses the folder (not "
    "empty: a .faiss.tmp file is left)",
    "watch-polling-loop": "watch dies with a traceback (WatchfilesRustInternalError: 'Too "
    "many levels of symbolic links', 'File system loop found') when its folder holds a "
    "symlink loop or a link to a folder above it, once a name that is not UTF-8 has made "
    "it poll the folders; nothing after is indexed",
    # Issue 41 ("Trust at the boundaries"):
    "outside-links": "issue 41 item 1: a symlink whose target is outside the root (a fake "
    "key next to the tree, a file of another root) is followed and its text indexed",
    "kept-row-text": "issue 41 item 4: a passage row kept for its model input keeps its "
    "old text at the new offsets (a heading made a line: trail + text read the same)",
    "data-keeps-text": "issue 41 item 5: a file that turns into data (a base64 blob) is "
    "skipped and its old text stays searchable",
    "same-size-and-mtime": "issue 41 item 6: a replacement of the same size whose mtime "
    "is kept (`cp -p`, `rsync -t`, a swapped link) is taken as unchanged",
    "swapped-root": "issue 41 item 8: `ln -sfn releases/r2 current` then `index current` "
    "adds releases/r2 as another root and keeps releases/r1's documents",
}
POINTS = (*KILL_POINTS, "after-commit")  # named points; one the product lacks is never reached
# The points a local publish passes from its first space save to its commit.
PUBLISH_POINTS = ("before-space-save", "before-publish")
RECORD_IDS = ("r1", "r2", "r3")


@dataclass(frozen=True)
class Setup:
    """What one test's machine runs with."""

    model_dir: Path
    work: Path  # a folder for the examples' trees and indexes
    postgres_url: str | None = None  # a database URL: the machine runs on PostgreSQL
    enabled: frozenset[str] = frozenset()  # the KNOWN_DEFECTS whose rules run
    processes: int = 1  # process runs (signalled runs, watch sessions) per example
    patience: float = 90.0  # seconds to wait for a process (generous: the machine is shared)
    queries: bool = True  # compare the hits of the fixed queries in the final check
    focus: frozenset[str] | None = None  # the only rules that run (None: every one)
    interruptions: tuple[dict, ...] | None = None  # when runs are signalled (None: any time)
    folders: tuple[str, ...] = FOLDERS  # where new files go
    names: tuple[str, ...] = NAMES  # the names new files take
    kinds: tuple[str, ...] = KINDS  # the extensions new files take
    remove_links: bool = False  # `remove` only symlinks (when there are)
    watched_changes: tuple[str, ...] = (
        "write",
        "edit",
        "delete",
        "move",
        "recreate root",
        "swap root",
    )


def _in_focus(name: str):  # -> a precondition decorator
    """Run the rule `name` only where the setup's `focus` lets it (a known defect's test
    runs only the rules that lead to it)."""
    return precondition(lambda self: self.setup.focus is None or name in self.setup.focus)


@dataclass
class _Targets:
    """The index under test, its neighbour (PostgreSQL), and fresh targets for oracles."""

    setup: Setup
    folder: Path
    sut: Target = ""
    neighbour: Target | None = None
    database: str | None = None
    made: int = 0
    _engines: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.setup.postgres_url is None:
            name = "ix?a=%41#b" if "odd-index-path" in self.setup.enabled else "ix"
            self.sut = self.folder / name
            return
        from tests.support.postgres_server import create_database

        self.database = create_database(self.setup.postgres_url, "oracle_machine")
        if "pg-public" in self.setup.enabled:
            self.sut, self.neighbour = f"{self.database}?index=public", self.database
        else:
            self.sut = f"{self.database}?index=sut"
            self.neighbour = f"{self.database}?index=neighbour"

    def fresh(self) -> Target:
        """A target no index has used yet."""
        self.made += 1
        if self.database is None:
            return self.folder / f"oracle-{self.made}"
        return f"{self.database}?index=oracle_{self.made}"

    def drop(self, target: Target) -> None:
        """Remove the index at `target` entirely (a folder, or a schema's tables)."""
        if not is_database_url(target):
            shutil.rmtree(target, ignore_errors=True)
            return
        from sqlalchemy import create_engine, text

        from indexer.store.postgres.location import PostgresLocation

        location = PostgresLocation.parse(str(target))
        engine = create_engine(location.url)  # type: ignore[arg-type]
        try:
            with engine.begin() as connection:
                if location.schema != "public":
                    connection.execute(text(f'DROP SCHEMA IF EXISTS "{location.schema}" CASCADE'))
                    return
                tables = connection.execute(
                    text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
                ).scalars()
                for table in list(tables):
                    connection.execute(text(f'DROP TABLE IF EXISTS public."{table}" CASCADE'))
        finally:
            engine.dispose()

    def close(self) -> None:
        """Drop the example's database (PostgreSQL); a folder goes with the tree."""
        if self.database is None:
            return
        import psycopg
        from sqlalchemy.engine import make_url

        parsed = make_url(self.database)
        dsn = f"host={parsed.host} port={parsed.port} user={parsed.username} dbname=postgres"
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {parsed.database} WITH (FORCE)")


class OracleMachine(RuleBasedStateMachine):
    """See the module docstring; `setup` is set by `machine_for`."""

    setup: ClassVar[Setup]
    examples: ClassVar[int] = 0  # how many examples have started (shrinking included)

    def __init__(self) -> None:
        super().__init__()
        type(self).examples += 1
        setup = self.setup
        self.enabled = setup.enabled
        work = Path(setup.work)
        work.mkdir(parents=True, exist_ok=True)
        self.base = Path(os.path.realpath(_new_folder(work)))
        self.tree = self.base / "tree"
        for folder in ("w", "v"):
            (self.tree / folder).mkdir(parents=True)
        (self.tree / "w" / "a.txt").write_text(tree_ops.new_text(".txt", 1))
        # (of three passages: a structure edit or a cut has passages to move or keep)
        (self.tree / "v" / "b.md").write_text(tree_ops.new_text(".md", 3, 150))
        self.outside = tree_ops.make_outside(self.base / "outside")
        if "swapped-root" in self.enabled:  # what the fix decides a swapped root means
            tree_ops.make_releases(self.base / "releases")
            (self.tree / LINKED_ROOT).symlink_to(Path("..", "releases", RELEASES[0]))
        self.targets = _Targets(setup, self.base)
        self.sut = self.targets.sut
        self.replay = Replay()
        self.model = str(setup.model_dir)
        self.writer = self._indexer()
        self.processes_left = setup.processes
        self.neighbour: IndexPrint | None = None
        if self.targets.neighbour is not None:
            self.neighbour = self._make_neighbour(self.targets.neighbour)

    def _indexer(self) -> Indexer:
        """A new writer of the index under test."""
        return Indexer(
            self.sut, model=self.model, precision=PRECISION, fill_batch_chunks=FILL_BATCH_CHUNKS
        )

    # -- the tree ----------------------------------------------------------------------

    def _files(self) -> list[Path]:
        return tree_ops.listing(self.tree)[0]

    def _links(self) -> list[Path]:
        return tree_ops.listing(self.tree)[1]

    def _folders(self) -> list[Path]:
        return [folder for folder in tree_ops.listing(self.tree)[2] if folder != self.tree]

    def _new_path(self, data, kind: str | None = None) -> Path:
        folder = self.tree / data.draw(st.sampled_from(self.setup.folders), label="folder")
        name = data.draw(st.sampled_from(self.setup.names), label="name")
        kind = kind or data.draw(st.sampled_from(self.setup.kinds), label="kind")
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{name}{kind}"

    def _free(self, path: Path) -> bool:
        return not path.exists() and not path.is_symlink()

    @_in_focus("write_file")
    @rule(data=st.data(), seed=st.integers(0, 50), long=st.booleans())
    def write_file(self, data, seed: int, long: bool) -> None:
        """Create a file, or replace one's whole content."""
        path = self._new_path(data)
        if path.is_symlink() or path.is_dir():
            return
        path.write_text(tree_ops.new_text(path.suffix, seed, 150 if long else 30))

    @_in_focus("edit_file")
    @precondition(lambda self: self._files())
    @rule(
        data=st.data(),
        how=st.sampled_from(["append", "prepend", "middle"]),
        seed=st.integers(0, 50),
    )
    def edit_file(self, data, how: str, seed: int) -> None:
        """Add a paragraph at the start or the end, or change a word in the middle."""
        path = data.draw(st.sampled_from(self._files()), label="file")
        path.write_text(tree_ops.edited(path.suffix, path.read_text(), how, seed))

    @_in_focus("delete_file")
    @precondition(lambda self: self._files())
    @rule(data=st.data())
    def delete_file(self, data) -> None:
        """Delete a file."""
        data.draw(st.sampled_from(self._files()), label="file").unlink()

    @_in_focus("move_file")
    @precondition(lambda self: self._files())
    @rule(data=st.data())
    def move_file(self, data) -> None:
        """Move or rename a file, keeping its extension (so its reader)."""
        path = data.draw(st.sampled_from(self._files()), label="file")
        destination = self._new_path(data, path.suffix)
        if self._free(destination):
            path.rename(destination)

    @_in_focus("change_extension")
    @precondition(lambda self: self._files())
    @rule(data=st.data())
    def change_extension(self, data) -> None:
        """Give a file another extension: with its text laid out for the new kind, or,
        under `move-reader`, the very same bytes (a pure rename)."""
        path = data.draw(st.sampled_from(self._files()), label="file")
        kind = data.draw(st.sampled_from([k for k in KINDS if k != path.suffix]), label="kind")
        destination = path.with_suffix(kind)
        if not self._free(destination):
            return
        text = path.read_text()
        path.rename(destination)
        if "move-reader" not in self.enabled:
            destination.write_text(tree_ops.converted(path.suffix, kind, text))

    @_in_focus("move_folder")
    @precondition(lambda self: self._folders())
    @rule(data=st.data())
    def move_folder(self, data) -> None:
        """Rename a folder or move it elsewhere in the tree (roots included)."""
        folder = data.draw(st.sampled_from(self._folders()), label="folder")
        destination = self.tree / data.draw(st.sampled_from(FOLDERS), label="to")
        destination = destination.with_name(destination.name + "2")
        if self._free(destination) and folder not in destination.parents:
            destination.parent.mkdir(parents=True, exist_ok=True)
            folder.rename(destination)

    @_in_focus("delete_folder")
    @precondition(lambda self: self._folders())
    @rule(data=st.data())
    def delete_folder(self, data) -> None:
        """Delete a folder and all it holds."""
        shutil.rmtree(data.draw(st.sampled_from(self._folders()), label="folder"))

    @_in_focus("make_symlink")
    @rule(data=st.data(), kind=st.sampled_from(["file", "folder", "dangling", "loop"]))
    def make_symlink(self, data, kind: str) -> None:
        """A symlink to a file (same extension), to a folder, to nothing, or in a loop."""
        files, folders = self._files(), self._folders()
        if kind == "file" and files:
            target = data.draw(st.sampled_from(files), label="target")
            link = self._new_path(data, target.suffix)
        elif kind == "folder" and folders:
            target = data.draw(st.sampled_from(folders), label="target")
            link = self._new_path(data).with_suffix("")
        elif kind == "dangling":
            link = self._new_path(data)
            target = link.with_name("nothing-here" + link.suffix)
        else:
            link = self._new_path(data)
            target = link  # a link to itself: the shortest loop
        if self._free(link):
            link.symlink_to(os.path.relpath(target, link.parent) if kind != "loop" else link.name)

    @_in_focus("make_hard_link")
    @precondition(lambda self: self._files())
    @rule(data=st.data())
    def make_hard_link(self, data) -> None:
        """A second name (same extension) for a file's bytes."""
        path = data.draw(st.sampled_from(self._files()), label="file")
        link = self._new_path(data, path.suffix)
        if self._free(link):
            os.link(path, link)

    # -- structure, data, replacements that keep size and mtime --------------------------

    def _prose_files(self) -> list[Path]:
        return [path for path in self._files() if not tree_ops.is_data(path.read_text())]

    def _data_files(self) -> list[Path]:
        return [path for path in self._files() if tree_ops.is_data(path.read_text())]

    @_in_focus("restructure")
    @precondition(lambda self: self._prose_files())
    @rule(data=st.data(), how=st.sampled_from(STRUCTURE_EDITS), seed=st.integers(0, 50))
    def restructure(self, data, how: str, seed: int) -> None:
        """Edit a file's structure, not its words: a heading made a line and a line made
        a heading, a heading's level changed, a section started or moved, the text laid
        out as another kind under the same name."""
        path = data.draw(st.sampled_from(self._prose_files()), label="file")
        text = tree_ops.restructured(path.suffix, path.read_text(), how, seed)
        if text is not None:
            path.write_text(text)

    @_in_focus("cut_to_a_passage")
    @precondition(lambda self: "kept-row-text" in self.enabled and store_exists(self.sut))
    @rule(data=st.data())
    def cut_to_a_passage(self, data) -> None:
        """Cut a file of several passages down to its last stored one, under its
        section's title as a plain line: what the model read of that passage (trail,
        blank line, text: the last is seldom too full for its trail) is the new file's
        only passage, with another text."""
        stored = index_fingerprint(self.sut).documents.values()
        choices = [
            (tree_ops.path_of(document.path), document.chunks[-1])
            for document in stored
            if document.metadata_json is None
            and len(document.chunks) > 1
            and document.chunks[-1].section
        ]
        choices = [(path, chunk) for path, chunk in choices if path.is_file()]
        if choices:
            path, chunk = data.draw(st.sampled_from(choices), label="passage")
            path.write_text(f"{chunk.section}\n\n{chunk.text}")

    @_in_focus("turn_into_data")
    @precondition(lambda self: "data-keeps-text" in self.enabled and self._prose_files())
    @rule(data=st.data(), seed=st.integers(0, 50))
    def turn_into_data(self, data, seed: int) -> None:
        """Overwrite a file of prose with a base64 blob (a run skips it: no language)."""
        path = data.draw(st.sampled_from(self._prose_files()), label="file")
        path.write_text(tree_ops.data_text(path.suffix, seed))

    @_in_focus("write_data_file")
    @rule(data=st.data(), seed=st.integers(0, 50))
    def write_data_file(self, data, seed: int) -> None:
        """A new file holding a base64 blob (skipped by every run: no document)."""
        path = self._new_path(data)
        if self._free(path):
            path.write_text(tree_ops.data_text(path.suffix, seed))

    @_in_focus("data_to_prose")
    @precondition(lambda self: self._data_files())
    @rule(data=st.data(), seed=st.integers(0, 50))
    def data_to_prose(self, data, seed: int) -> None:
        """A file of data made prose again."""
        path = data.draw(st.sampled_from(self._data_files()), label="file")
        path.write_text(tree_ops.new_text(path.suffix, seed))

    @_in_focus("replace_keeping_stat")
    @precondition(lambda self: "same-size-and-mtime" in self.enabled and self._prose_files())
    @rule(
        data=st.data(), how=st.sampled_from(["in place", "renamed over"]), seed=st.integers(0, 50)
    )
    def replace_keeping_stat(self, data, how: str, seed: int) -> None:
        """Replace a file's content with other words of the same length and give it back
        its mtime (`cp -p`, `rsync -t`, an archive extracted): same size, same mtime."""
        path = data.draw(st.sampled_from(self._prose_files()), label="file")
        text = tree_ops.same_size_variant(path.read_text(), seed)
        if text is not None:
            tree_ops.replace_keeping_stat(path, text, how)

    # -- links that leave the root, links swapped -----------------------------------------

    @_in_focus("link_outside")
    @precondition(lambda self: "outside-links" in self.enabled)
    @rule(data=st.data(), kind=st.sampled_from(["file", "folder"]))
    def link_outside(self, data, kind: str) -> None:
        """A symlink to a file or folder next to the tree, outside every root (a fake
        key, notes holding `SECRET`): never to be indexed."""
        if kind == "file":
            target = data.draw(
                st.sampled_from([self.outside / "id_rsa.txt", self.outside / "secret.md"]),
                label="target",
            )
            link = self._new_path(data, target.suffix)
        else:
            target = self.outside / "keys"
            link = self._new_path(data).with_suffix("")
        if self._free(link):
            link.symlink_to(os.path.relpath(target, link.parent))

    def _file_links(self) -> list[Path]:
        return [link for link in self._links() if link.is_file()]

    @_in_focus("swap_link")
    @precondition(lambda self: self._file_links())
    @rule(data=st.data(), to=st.sampled_from(["tree", "outside", "twin"]), seed=st.integers(0, 50))
    def swap_link(self, data, to: str, seed: int) -> None:
        """Point a file's symlink elsewhere in one step (`ln -sfn` to a new link, renamed
        over the old): to another file of the tree; where `outside-links` is enabled, to
        a file outside the tree; where `same-size-and-mtime` is, to a twin of its target
        (a copy with other words of the same length, given the target's mtime)."""
        link = data.draw(st.sampled_from(self._file_links()), label="link")
        old = Path(os.path.realpath(link))
        if to == "outside" and "outside-links" in self.enabled:
            target = self.outside / ("secret.md" if link.suffix == ".md" else "id_rsa.txt")
        elif to == "twin" and "same-size-and-mtime" in self.enabled:
            if not tree_ops.resolves_inside(old, self.tree):
                return
            text = tree_ops.same_size_variant(old.read_text(), seed)
            target = old.with_name(f"{old.stem}-twin{old.suffix}")
            if text is None or not self._free(target):
                return
            target.write_text(text)
            status = old.stat()
            os.utime(target, ns=(status.st_atime_ns, status.st_mtime_ns))
        else:
            files = [path for path in self._files() if path.suffix == link.suffix]
            target = data.draw(st.sampled_from(files or [old]), label="target")
        swapped = link.with_name(f".{link.name}.new")
        swapped.symlink_to(os.path.relpath(target, link.parent))
        os.replace(swapped, link)

    @_in_focus("swap_root")
    @precondition(lambda self: "swapped-root" in self.enabled)
    @rule()
    def swap_root(self) -> None:
        """`ln -sfn releases/r2 current.tmp && mv -T current.tmp current`: the root that
        is a symlink now points to the other release."""
        current = self.tree / LINKED_ROOT
        now = Path(os.readlink(current)).name
        other = RELEASES[1] if now == RELEASES[0] else RELEASES[0]
        swapped = self.tree / f"{LINKED_ROOT}.tmp"
        swapped.symlink_to(Path("..", "releases", other))
        os.replace(swapped, current)

    # -- runs --------------------------------------------------------------------------

    def _live_roots(self) -> list[Path]:
        """The roots whose folders exist (and the root that is a symlink, where it is)."""
        roots = [self.tree / root for root in ROOTS if (self.tree / root).is_dir()]
        linked = self.tree / LINKED_ROOT
        return [*roots, linked] if linked.is_symlink() and linked.is_dir() else roots

    def _draw_root(self, data) -> Path:
        return data.draw(st.sampled_from(self._live_roots()), label="root")

    def _draw_exclude(self, data, command_line: bool = False) -> list[str] | None:
        """--exclude patterns to give (None: keep the remembered ones; [] forgets them,
        which only the library can say: the command line's no --exclude is None)."""
        if not data.draw(st.booleans(), label="give --exclude"):
            return None
        smallest = 1 if command_line else 0
        patterns = st.lists(st.sampled_from(EXCLUDES), min_size=smallest, max_size=2, unique=True)
        return data.draw(patterns, label="exclude")

    def _remember(self, root: Path, exclude: list[str] | None) -> None:
        """What a completed run of `root` leaves remembered."""
        if exclude is not None:
            self.replay.roots[root] = tuple(exclude)
        else:
            self.replay.roots.setdefault(root, ())
        self._forget_gone_under(root)

    def _forget_gone_under(self, root: Path) -> None:
        """A completed run of `root` forgets the roots nested in it whose folders are gone
        (`indexer.runs.nested_roots`): should such a folder come back, its files are
        `root`'s, by `root`'s rules, not by the rules it had."""
        if not root.is_dir():  # a root that is gone keeps what is under it for its return
            return
        for other in [other for other in self.replay.roots if root in other.parents]:
            if not other.is_dir():
                del self.replay.roots[other]

    @_in_focus("index_root")
    @precondition(lambda self: self._live_roots())
    @rule(data=st.data(), how=st.sampled_from(["writer", "new Indexer", "cli"]))
    def index_root(self, data, how: str) -> None:
        """Index a root: by the long-lived writer, a new Indexer, or `ctxsearch index`."""
        self._index_by(how, self._draw_root(data), self._draw_exclude(data, how == "cli"))

    def _index_by(self, how: str, root: Path, exclude: list[str] | None) -> None:
        """A run of `root` by `how` (see `index_root`), then its documents checked."""
        if how == "cli":
            before = index_fingerprint(self.sut)
            if not self._cli_index(root, exclude):
                self._expect_same(before, "a refused run (no files) changes nothing")
                return
        elif how == "writer":
            self._run(self.writer, root, exclude)
        else:
            self._run(self._indexer(), root, exclude)
        self._remember(root, exclude)
        self._expect_current(root)

    @_in_focus("index_nested_then_parent")
    @precondition(lambda self: "nested-roots" in self.enabled and (self.tree / "w").is_dir())
    @rule(data=st.data(), how=st.sampled_from(["writer", "new Indexer", "cli"]))
    def index_nested_then_parent(self, data, how: str) -> None:
        """`index w/sub` (with its own --exclude, perhaps), then `index w`: item 5's user,
        whose later changes under `w/sub` a run (or watch) of `w` must bring up to date."""
        nested = self.tree / "w" / "sub"
        if not nested.is_dir():
            nested.mkdir()
            (nested / "nested.md").write_text(tree_ops.new_text(".md", 11))
        self._index_by(how, nested, self._draw_exclude(data, how == "cli"))
        self._index_by(how, self.tree / "w", None)

    def _run(self, indexer: Indexer, root: Path, exclude: list[str] | None) -> None:
        deadline = time.monotonic() + self.setup.patience
        while True:  # a killed PostgreSQL client's lock lasts until the server notices
            try:
                indexer.index_folder(root, exclude=exclude, allow_empty=True)
                return
            except IndexLocked:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _cli_index(self, root: Path, exclude: list[str] | None) -> bool:
        """`ctxsearch index ROOT`; False when it refused a folder with nothing to index."""
        args = ["index", str(root), "--index", str(self.sut), "--model", self.model]
        args += ["--precision", PRECISION, "--quiet", "--json"]
        args += ["--fill-batch-chunks", str(FILL_BATCH_CHUNKS)]
        for pattern in exclude or []:
            args += ["--exclude", pattern]
        result = CliRunner().invoke(_cli(), args)
        if result.exit_code == 2 and "no files to index" in result.output:
            return False
        assert result.exit_code == 0, result.output
        return True

    @_in_focus("interrupted_run")
    @precondition(lambda self: self._live_roots() and self.processes_left > 0)
    @precondition(lambda self: "first-run-killed" in self.enabled or store_exists(self.sut))
    @rule(data=st.data())
    def interrupted_run(self, data) -> None:
        """`ctxsearch index` signalled (SIGKILL or SIGINT) at a named point or a few
        statements after it (`tests.support.oracle_process`): the index must verify and hold the
        old state or the new one; the next run brings it to the oracle."""
        self.processes_left -= 1
        root, exclude = self._draw_root(data), self._draw_exclude(data, command_line=True)
        spec = data.draw(self._interruptions(), label="signal")
        before = index_fingerprint(self.sut)
        result = self._signalled_index(root, exclude, spec)
        after = index_fingerprint(self.sut)
        assert not after.problems, f"after {spec}: {after.problems}\n{result.stderr[-3000:]}"
        assert "Traceback" not in result.stderr, f"after {spec}:\n{result.stderr[-3000:]}"
        if differences(after, before):
            # It published: the documents under the root are the oracle's (their contextual
            # vectors perhaps not all filled yet), the rest as before.
            self._expect_current(root, exclude=exclude, actual=after, filling=True)
            domain = self._domain(root)
            outside = differences(after, before, lambda path: not domain(path))
            assert not outside, f"a run of {root} changed what is not under it: {outside}"
            self._remember(root, exclude)
        self._run(self.writer, root, exclude)
        self._remember(root, exclude)
        self._expect_current(root)

    def _interruptions(self) -> st.SearchStrategy[dict[str, Any]]:
        """When to signal: the setup's menu, or any point, pass and step after it (but,
        unless `interrupt-after-commit` is enabled, no SIGINT inside the local publish
        after its first point: one just after the commit breaks the index)."""
        if self.setup.interruptions is not None:
            return st.sampled_from(self.setup.interruptions)
        local = self.targets.database is None and "interrupt-after-commit" not in self.enabled

        def allowed(spec: dict[str, Any]) -> bool:
            inside = spec["point"] in PUBLISH_POINTS and spec["after"] > 0
            return not (local and spec["signal"] == "SIGINT" and inside)

        return st.fixed_dictionaries(
            {
                "signal": st.sampled_from(["SIGKILL", "SIGINT"]),
                "point": st.sampled_from(POINTS),
                "count": st.integers(1, 2),
                "after": st.integers(0, 8),
            }
        ).filter(allowed)

    def _signalled_index(
        self, root: Path, exclude: list[str] | None, spec: dict[str, Any]
    ) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "tests.support.oracle_process", "index", str(root)]
        command += ["--index", str(self.sut), "--model", self.model, "--precision", PRECISION, "-q"]
        command += ["--fill-batch-chunks", str(FILL_BATCH_CHUNKS)]
        for pattern in exclude or []:
            command += ["--exclude", pattern]
        return subprocess.run(
            command,
            cwd=ROOT,
            env={**os.environ, "ORACLE_SIGNAL": json.dumps(spec)},
            capture_output=True,
            text=True,
            timeout=self.setup.patience * 3,
        )

    @_in_focus("watch")
    @precondition(lambda self: self._live_roots() and self.processes_left > 0)
    @rule(data=st.data())
    def watch(self, data) -> None:
        """`ctxsearch watch ROOT` while the tree changes under it: each change it reports
        brings it nearer the oracle, which it must reach; SIGINT then stops it (exit 0).
        The root that is a symlink (under `swapped-root`) may be watched and swapped."""
        roots = self._live_roots()
        if "watch-non-utf8" not in self.enabled:  # it dies when such a file is even read
            roots = [root for root in roots if all(map(_is_utf8, _paths_under(root)))]
        if "watch-polling-loop" not in self.enabled:  # it dies once it polls a loop
            roots = [root for root in roots if not any(map(_is_loop, _paths_under(root)))]
        if not roots:
            return
        self.processes_left -= 1
        root = data.draw(st.sampled_from(roots), label="root")
        changes = data.draw(
            st.lists(st.sampled_from(self.setup.watched_changes), min_size=1, max_size=3),
            label="changes",
        )
        with _Watcher(self, root) as watcher:
            self._remember(root, None)
            watcher.until_current()
            for change in changes:
                if change == "recreate root":
                    if "watch-recreated" not in self.enabled or root.is_symlink():
                        continue
                    shutil.rmtree(root)
                    root.mkdir()
                    (root / "again.md").write_text(tree_ops.new_text(".md", 3))
                elif change == "swap root":
                    if not root.is_symlink():
                        continue
                    self.swap_root()
                else:
                    self._change_under(root, change, data)
                watcher.until_current()  # each change, seen and published
                # That run saw the change: a root nested in `root` whose folder it removed
                # (a recreated root) is forgotten, and its files are `root`'s from now on.
                self._forget_gone_under(root)
        self._expect_current(root)

    def _change_under(self, root: Path, change: str, data) -> None:
        """One change of a file under `root` (those a watcher must notice)."""
        utf8 = "watch-non-utf8" not in self.enabled  # the only names the watch can take
        files = [p for p in self._files() if root in p.parents and (_is_utf8(p) or not utf8)]
        if change == "write" or not files:
            relative = data.draw(st.sampled_from(["", "deep", "notes", "sub"]), label="folder")
            folder = root / relative
            folder.mkdir(parents=True, exist_ok=True)
            names = [name for name in self.setup.names if _is_utf8(Path(name)) or not utf8]
            names = names or ["a"]
            name = data.draw(st.sampled_from(names), label="name")
            kind = data.draw(st.sampled_from(KINDS), label="kind")
            path = folder / f"{name}{kind}"
            if not path.is_symlink():
                path.write_text(
                    tree_ops.new_text(kind, data.draw(st.integers(0, 50), label="seed"))
                )
            return
        path = data.draw(st.sampled_from(files), label="file")
        if change == "edit":
            path.write_text(tree_ops.edited(path.suffix, path.read_text(), "append", 5))
        elif change == "delete":
            path.unlink()
        elif self._free(destination := path.with_name("moved-" + path.name)):
            path.rename(destination)

    # -- remove, records, a replaced index ---------------------------------------------

    @_in_focus("remove")
    @rule(data=st.data())
    def remove(self, data) -> None:
        """`ctxsearch remove PATH`: the documents at or under PATH go, the rest stays."""
        files, links, folders = tree_ops.listing(self.tree)
        links = [link for link in links if link != self.tree / LINKED_ROOT]  # a root, not a file
        choices = [*folders, *files, self.tree / "w" / "never-indexed.txt"]
        if "remove-link" in self.enabled:
            choices = links if links and self.setup.remove_links else [*choices, *links]
        else:
            choices = [
                path for path in choices if not tree_ops.has_link_on_the_way(path, self.tree)
            ]
        path = data.draw(st.sampled_from(choices), label="path")
        before = index_fingerprint(self.sut)
        result = CliRunner().invoke(
            _cli(), ["remove", str(path), "--index", str(self.sut), "--json"]
        )
        text = path_text(path)
        gone = {p for p in before.documents if p == text or p.startswith(text + "/")}
        roots = [root for root in self.replay.roots if root == path or path in root.parents]
        if not before.documents and not before.roots:
            assert result.exit_code != 0, result.output
            return
        if not gone and not [r for r in before.roots if r == text or r.startswith(text + "/")]:
            assert result.exit_code == 2, result.output  # NotIndexed: a usage error
            assert "nothing indexed there" in result.output, result.output
            self._expect_same(before, f"remove {path} (nothing there)")
            return
        assert result.exit_code == 0, result.output
        for root in roots:
            del self.replay.roots[root]
        after = index_fingerprint(self.sut)
        found = differences(after, before, lambda p: p not in gone)
        found += [f"not removed: {p}" for p in sorted(gone & after.documents.keys())]
        assert not found, f"remove {path}:\n  " + "\n  ".join(found)

    @_in_focus("upsert_record")
    @rule(
        record_id=st.sampled_from(RECORD_IDS),
        seed=st.integers(0, 30),
        metadata=st.fixed_dictionaries(
            {},
            optional={
                "year": st.sampled_from([2023, 2024, "2023", 2.5]),
                "lang": st.sampled_from(["en", "fr"]),
                "draft": st.booleans(),
                "score": st.sampled_from([2023.0, 1.0]),
            },
        ),
    )
    def upsert_record(self, record_id: str, seed: int, metadata: dict) -> None:
        """Add or replace a record through the long-lived writer."""
        if "where-float" not in self.enabled:
            metadata.pop("score", None)
        self._upsert_through_writer(record_id, seed, metadata)

    def _upsert_through_writer(self, record_id: str, seed: int, metadata: dict) -> None:
        text = " ".join(tree_ops.paragraphs(seed, 40))
        self.writer.upsert_records([{"id": record_id, "text": text, "metadata": metadata}])
        self.replay.records[record_id] = (text, metadata)
        self._expect_records()

    @_in_focus("delete_records")
    @rule(ids=st.lists(st.sampled_from([*RECORD_IDS, "never"]), min_size=1, max_size=2))
    def delete_records(self, ids: list[str]) -> None:
        """Delete records (an unknown id is only reported)."""
        if not store_exists(self.sut):
            with pytest.raises(IndexNotFound):
                self.writer.delete_records(ids)
            return
        summary = self.writer.delete_records(ids)
        assert set(summary.not_found) == {i for i in ids if i not in self.replay.records}
        for record_id in ids:
            self.replay.records.pop(record_id, None)
        self._expect_records()

    @_in_focus("replace_index")
    @precondition(lambda self: self.replay.roots or self.replay.records)
    @rule(other_pooling=st.booleans(), write_through=st.sampled_from([None, *RECORD_IDS]))
    def replace_index(self, other_pooling: bool, write_through: str | None) -> None:
        """Remove the index and build it again (the writer keeps running); under
        `replaced-index` with another pooling, which the writer must follow. With
        `write_through`, the long-lived writer upserts that record just before (so it
        holds encoders made for the old index) and another text just after: the record's
        vectors must be the new index's (the check compares every vector)."""
        if write_through is not None:
            self._upsert_through_writer(write_through, 31, {})
        self._replace_index(other_pooling)
        if write_through is not None and store_exists(self.sut):
            self._upsert_through_writer(write_through, 32, {"after": "replaced"})

    def _replace_index(self, other_pooling: bool) -> None:
        pooling = "cls" if other_pooling and "replaced-index" in self.enabled else "mean"
        self.targets.drop(self.sut)
        self.replay.pooling = pooling
        self.replay.roots = {
            root: rules for root, rules in self.replay.roots.items() if root.is_dir()
        }
        if not self.replay.roots and not self.replay.records:
            self.replay.pooling = "mean"  # nothing to build: the next run makes a new index
            return
        build_fresh_index(self.sut, self.replay, self.model, PRECISION)

    @_in_focus("check_everything")
    @rule()
    def check_everything(self) -> None:
        """Bring every root up to date and compare the whole index with the oracle."""
        self._check_everything(queries=False)

    def teardown(self) -> None:
        try:
            self._check_everything(queries=self.setup.queries)
        finally:
            self.targets.close()
            shutil.rmtree(self.base, ignore_errors=True)

    # -- expectations ------------------------------------------------------------------

    def _domain(self, root: Path) -> Callable[[str], bool]:
        """The paths a completed run of `root` answers for: those under it, but (where
        `nested-roots` is not enabled) those of the roots nested in it; and records."""
        # a root that is a symlink: its documents may be stored under its target
        prefix = (path_text(root) + "/", path_text(os.path.realpath(root)) + "/")
        nested: tuple[str, ...] = ()
        if "nested-roots" not in self.enabled:
            nested = tuple(
                path_text(other) + "/" for other in self.replay.roots if root in other.parents
            )
        return lambda path: (
            path.startswith("record:")
            or (path.startswith(prefix) and not path.startswith(nested or ("\0",)))
        )

    def _oracle(self, replay: Replay) -> IndexPrint:
        target = build_fresh_index(self.targets.fresh(), replay, self.model, PRECISION)
        try:
            return index_fingerprint(target)
        finally:
            self.targets.drop(target)

    def _expect_current(
        self,
        root: Path,
        exclude: list[str] | None = None,
        actual: IndexPrint | None = None,
        filling: bool = False,
    ) -> None:
        """The documents under `root` (and the records) are those of a fresh index (with
        `filling`, perhaps still without some contextual vectors: a state the fill
        publishes on the way)."""
        rules = dict(self.replay.roots)
        if exclude is not None:
            rules[root] = tuple(exclude)
        rules.setdefault(root, ())
        roots = {other: r for other, r in rules.items() if other == root or root in other.parents}
        expected = self._oracle(Replay(roots, dict(self.replay.records), self.replay.pooling))
        actual = actual or index_fingerprint(self.sut)
        found = differences(actual, expected, self._domain(root), filling)
        found += self._unsound(actual.within(self._domain(root)), [root])
        assert not found, f"after a run of {root}:\n  " + "\n  ".join(found[:30])

    def _unsound(self, stored: IndexPrint, roots: list[Path]) -> list[str]:
        """What the index holds that the files themselves say it should not, whatever a
        fresh index holds: a passage whose text is not the document's text at its
        offsets, a document for a file of data, and (where `outside-links` is enabled) a
        document whose file resolves outside every root it is under, or text holding
        `SECRET`, which only the files outside the tree hold."""
        found = passage_mismatches(stored, self._text_now)
        if "outside-links" not in self.enabled:
            return found
        roots = [*roots, *self.replay.roots]
        for path, document in stored.documents.items():
            owners = [root for root in roots if self._domain(root)(path)]
            file = tree_ops.path_of(path)
            on_disk = document.metadata_json is None and os.path.lexists(file)
            if on_disk and not any(tree_ops.resolves_inside(file, root) for root in owners):
                found.append(f"{path}: indexed, but resolves to {os.path.realpath(file)}")
            if any(SECRET in chunk.text for chunk in document.chunks):
                found.append(f"{path}: a passage holds {SECRET!r} (from outside the tree)")
        return found

    def _text_now(self, path: str) -> str | None:
        """The text a document at `path` must hold now: a record's, or its file's as the
        file's reader reads it (`DATA` for a file of data; None when nothing is there)."""
        if path.startswith("record:"):
            record = self.replay.records.get(path.removeprefix("record:"))
            return None if record is None else record[0]
        file = tree_ops.path_of(path)
        try:
            status = file.stat()
            if tree_ops.is_data(file.read_text()):
                return DATA
            source = SourceFile(file, status.st_size, status.st_mtime_ns)
            return read_document(source).text
        except (OSError, UnicodeDecodeError, UnreadableFile):
            return None

    def _found_from_outside(self) -> list[str]:
        """Where `outside-links` is enabled: what a lexical search for `SECRET` finds."""
        if "outside-links" not in self.enabled or not store_exists(self.sut):
            return []
        from search.engine import Searcher

        with Searcher(self.sut, query_encoder="torch") as searcher:
            hits = searcher.search(SECRET, k=5, mode="lexical").results
        return [f"a search for {SECRET!r} finds {hit.path}" for hit in hits]

    def _expect_same(self, before: IndexPrint, what: str) -> None:
        found = differences(index_fingerprint(self.sut), before)
        assert not found, f"{what}:\n  " + "\n  ".join(found[:30])

    def _expect_records(self) -> None:
        """The records are the oracle's, and `where` reads the same from the CLI and JSON."""
        expected = self._oracle(Replay({}, dict(self.replay.records), self.replay.pooling))
        actual = index_fingerprint(self.sut)
        found = differences(actual, expected, lambda path: path.startswith("record:"))
        assert not found, "the records:\n  " + "\n  ".join(found[:30])
        self._expect_same_where()

    def _expect_same_where(self) -> None:
        from search.engine import Searcher

        pairs = {
            (k, v) for _text, metadata in self.replay.records.values() for k, v in metadata.items()
        }
        if not pairs:
            return
        with Searcher(self.sut, query_encoder="torch") as searcher:
            for key, value in sorted(pairs, key=repr):
                written = value if isinstance(value, str) else json.dumps(value)
                as_json = searcher.search("bank", k=10, mode="contextual", where={key: value})
                as_cli = searcher.search(
                    "bank", k=10, mode="contextual", where=[f"{key}={written}"]
                )
                assert {h.id for h in as_json.results} == {h.id for h in as_cli.results}, (
                    f"where {key}={written} (the CLI's) finds other records than {{{key!r}: "
                    f"{value!r}}} (JSON's)"
                )
                command = ["query", "bank", "--index", str(self.sut), "--mode", "contextual"]
                command += ["-k", "10", "--where", f"{key}={written}", "--json"]
                result = CliRunner().invoke(_cli(), [*command, "--query-encoder", "torch"])
                assert result.exit_code == 0, result.output
                found = {hit["id"] for hit in json.loads(result.stdout)["results"]}
                assert found == {h.id for h in as_json.results}, (
                    f"`ctxsearch query --where {key}={written}` finds other records than "
                    f"{{{key!r}: {value!r}}} in Python"
                )

    def _check_everything(self, queries: bool) -> None:
        live = self.replay.live_roots()
        if "nested-roots" in self.enabled:  # a run of a folder covers the roots in it
            live = [root for root in live if not any(other in root.parents for other in live)]
        for root in live:
            self._run(self.writer, root, None)
            self._forget_gone_under(root)
        expected = self._oracle(self.replay)
        actual = index_fingerprint(self.sut)
        domain = self._everything()
        found = differences(actual, expected, domain)
        found += self._unsound(actual.within(domain), live)
        found += self._found_from_outside()
        assert not found, "after bringing every root up to date:\n  " + "\n  ".join(found[:30])
        if self.neighbour is not None:
            found = differences(index_fingerprint(self.targets.neighbour), self.neighbour)
            assert not found, "the other index of the database changed:\n  " + "\n  ".join(found)
        if queries and all(domain(path) for path in actual.documents) and actual.documents:
            target = build_fresh_index(self.targets.fresh(), self.replay, self.model, PRECISION)
            try:
                assert_same_hits(self.sut, target)
            finally:
                self.targets.drop(target)

    def _everything(self) -> Callable[[str], bool]:
        """Every path but those of roots whose folders are gone (nothing can bring those
        up to date but `remove`), and with `nested-roots` not enabled, of roots nested
        in a live root that are gone."""
        roots = sorted(self.replay.roots, key=lambda root: len(root.parts))
        strict = "nested-roots" in self.enabled

        def covered(path: str) -> bool:
            owners = [root for root in roots if path.startswith(path_text(root) + "/")]
            if not owners:
                return True
            if strict:
                return any(owner.is_dir() for owner in owners)
            return owners[-1].is_dir()

        return covered

    def _make_neighbour(self, target: Target) -> IndexPrint:
        folder = self.base / "neighbour"
        folder.mkdir()
        (folder / "n.md").write_text(tree_ops.new_text(".md", 40))
        (folder / "m.txt").write_text(tree_ops.new_text(".txt", 41))
        Indexer(target, model=self.model, precision=PRECISION).index_folder(folder)
        return index_fingerprint(target)


# What `watch` says when a stop signal lands before it has taken its stop signals: while
# Python loads the commands, or in the instant before the watch installs its handlers.
EARLY_INTERRUPT_LINES = (
    "ctxsearch: interrupted before the command started\n",
    "ctxsearch: interrupted\n",
)


class _Watcher:
    """A `ctxsearch watch` process on one root, and its JSON lines (one per run)."""

    def __init__(self, machine: OracleMachine, root: Path) -> None:
        self.machine, self.root = machine, root
        self.log = machine.base / "watch.err"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> _Watcher:
        machine = self.machine
        command = [sys.executable, "-m", "search", "watch", str(self.root), "--index"]
        command += [str(machine.sut), "--model", machine.model, "--debounce", "100", "--json"]
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                command, cwd=ROOT, stdout=subprocess.PIPE, stderr=log, bufsize=0
            )
        return self

    def until_current(self) -> None:
        """Wait, run by run, until the index under the root is the oracle's."""
        machine, process = self.machine, self.process
        assert process is not None and process.stdout is not None
        deadline = time.monotonic() + machine.setup.patience
        last: list[str] = ["no run reported"]
        while time.monotonic() < deadline:
            try:
                machine._expect_current(self.root)
                return
            except AssertionError as error:
                last = [str(error)]
            if not _line_within(process, deadline - time.monotonic()):
                break
        log = self.log.read_text()[-2000:]
        raise AssertionError(f"watch never brought {self.root} up to date:\n{last[0]}\n{log}")

    def __exit__(self, *exc: object) -> None:
        process = self.process
        assert process is not None
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                code = process.wait(self.machine.setup.patience)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise AssertionError("watch did not stop on SIGINT") from None
        else:
            code = process.returncode
        if exc[0] is None:
            stderr = self.log.read_text()
            # The signal may land while Python still loads the commands (the index was
            # already current, so nothing was waited for): then one line, and Ctrl-C's code,
            # or the process ends by SIGINT itself after that line (-2; a shell says 130
            # for both), which CPython does now and then for an interrupted import.
            early = code in (130, -signal.SIGINT) and stderr in EARLY_INTERRUPT_LINES
            assert (code == 0 and "Traceback" not in stderr) or early, (
                f"watch ended {code}:\n{stderr[-2000:]}"
            )


def _line_within(process: subprocess.Popen, seconds: float) -> bool:
    """Wait up to `seconds` for the process to print (a run's summary line); False if it
    printed nothing, or ended."""
    import selectors

    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=max(0.0, seconds)):
            return False
    return bool(os.read(process.stdout.fileno(), 1 << 16))


def _paths_under(folder: Path) -> list[Path]:
    return [
        Path(where, name) for where, folders, files in os.walk(folder) for name in folders + files
    ]


def _is_loop(path: Path) -> bool:
    """Whether `path` is a symlink that leads back to itself, or to a folder that holds
    it (a walk that follows links never ends)."""
    if not path.is_symlink():
        return False
    try:
        target = os.path.realpath(path, strict=True)
    except OSError as error:
        return error.errno == errno.ELOOP
    return os.path.isdir(target) and tree_ops.resolves_inside(path.parent, Path(target))


def _is_utf8(path: Path) -> bool:
    try:
        os.fsencode(path).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _cli():  # -> click.Group, imported late (the CLI imports much)
    from search.cli import cli

    return cli


def _new_folder(work: Path) -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix="example-", dir=work))


def machine_for(setup: Setup) -> type[OracleMachine]:
    """The machine class that runs with `setup`."""
    return type("OracleMachineUnderTest", (OracleMachine,), {"setup": setup, "examples": 0})
