"""The roots recorded under a run's folder: a parent's run keeps them up to date too,
each with its own rules.

`index w/sub --exclude 'draft*'`, then `index w`: `w/sub` stays a root of its own (`ls`
counts it apart, `remove w/sub` forgets it) and its rules hold under it, whatever `w`'s
say. A run over `w` walks `w` with `w`'s rules and each root nested in it with that
root's, and a file belongs to the deepest of these roots that holds it: the files a
fresh index of the same roots holds, read the same way. A nested root whose folder is
gone (deleted, or a parent renamed) is forgotten by the parent's run, and its files are
the parent's again: gone, or found moved under their new path. One that cannot be looked
at keeps its documents, like a folder the walk cannot list. A root that is one file
(`indexer.runs.file_roots`) is forgotten too: its file is the parent's, by its rules.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from indexer.reading.rules import FILE_ROOT, RootRules
from indexer.reading.sources import path_text
from indexer.store.base import Store


@dataclass(frozen=True)
class RunRoot:
    """A root a run walks, with the rules that choose its files."""

    path: Path
    rules: RootRules

    @property
    def prefix(self) -> str:
        """What the paths of its files start with."""
        return path_text(self.path).rstrip("/") + "/"


@dataclass
class NestedRoots:
    """The roots recorded strictly under a run's folder, by what became of their folders."""

    recorded: list[str] = field(default_factory=list)  # all of them, as recorded
    present: list[RunRoot] = field(default_factory=list)  # walked with their own rules
    gone: list[str] = field(default_factory=list)  # forgotten by the run
    unknown: list[str] = field(default_factory=list)  # not looked at: documents kept
    files: list[str] = field(default_factory=list)  # roots that are one file: taken in


def nested_roots(store: Store, folder: Path) -> NestedRoots:
    """The roots recorded under `folder`, each found on disk (or not) with its rules."""
    found = NestedRoots(recorded=store.roots_under(folder))
    for text in found.recorded:
        if store.root_rules(Path(text)) == FILE_ROOT:
            found.files.append(text)
            continue
        try:
            path = _folder_named(folder, text)
        except OSError:
            found.unknown.append(text)
            continue
        if path is None:
            found.gone.append(text)
        else:
            rules = RootRules.from_json(store.root_rules(path))
            found.present.append(RunRoot(path, rules))
    return found


def owner(path: str, roots: list[RunRoot]) -> RunRoot | None:
    """The deepest of `roots` that holds the file at `path` (None if none does)."""
    holders = [root for root in roots if path.startswith(root.prefix)]
    return max(holders, key=lambda root: len(root.prefix), default=None)


def _folder_named(folder: Path, text: str) -> Path | None:
    """The folder under `folder` whose path text is `text`, or None if there is none.

    Found a level at a time by listing, since a name that is not UTF-8 is kept as
    escaped text (see `path_text`) that no longer names the file. Raises `OSError`
    when a level cannot be listed: then whether it is there is unknown.
    """
    current = folder
    for part in text[len(path_text(folder).rstrip("/")) + 1 :].split("/"):
        candidate = current / part
        if candidate.is_dir() and not candidate.is_symlink():
            current = candidate
            continue
        try:
            entries = list(os.scandir(current))
        except (FileNotFoundError, NotADirectoryError):
            return None
        named = (
            e for e in entries if path_text(e.name) == part and e.is_dir(follow_symlinks=False)
        )
        match = next(named, None)
        if match is None:
            return None
        current = Path(match.path)
    return current
