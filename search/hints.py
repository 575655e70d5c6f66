"""Hints instead of silence: why a filter cannot match anything in the index.

A search whose filter matches nothing answers no hits, which reads the same as a query
nothing is close to. `filter_hints` names the filter values that match no document on
their own, and what is there: the indexed roots for a folder (and a root that holds no
document now), for a path glob a nearby glob that matches (`tutorial/*` for `tutorial/`)
or else the file types there are, the file types there are for a type, the metadata keys
for a key, and the
stored spelling of a value that differs only in case (`public=True` where records hold
`true`), a comparison no value meets, an empty list of allowed values (which matches
nothing), and a quoted phrase no passage holds. It is called only for a search that
found nothing, so a search with hits pays nothing.
"""

from __future__ import annotations

from indexer.reading.formats import FILE_TYPES
from indexer.records.record import RECORD_PREFIX
from indexer.store.base import Snapshot
from indexer.store.filters import SearchFilter
from indexer.store.where import WhereCondition
from indexer.store.word_filter import WordFilter

SHOWN = 5  # at most this many roots, types or keys in one hint


def filter_hints(snapshot: Snapshot, where: SearchFilter) -> list[str]:
    """One sentence for each value of `where` that matches no document by itself."""
    hints = [_under_hint(snapshot, folder) for folder in where.under]
    hints += [_path_hint(snapshot, glob) for glob in where.paths]
    hints += [_type_hint(snapshot, kind) for kind in where.types]
    if where.metadata:
        hints += _where_hints(snapshot, where.metadata)
    hints += [_phrase_hint(snapshot, phrase) for phrase in where.words.phrases]
    return [hint for hint in hints if hint]


def _phrase_hint(snapshot: Snapshot, phrase: str) -> str:
    if snapshot.chunk_count(SearchFilter(words=WordFilter((phrase,)))):
        return ""
    return (
        f'no passage holds the phrase "{phrase}" (its words adjacent and in order); '
        "`literal` (`--literal`) reads quotes as part of the text"
    )


def _under_hint(snapshot: Snapshot, folder: str) -> str:
    """Why nothing is under `folder`, and where documents are. A root stays indexed when
    its last file goes (as `watch` keeps it): such a root is said to hold nothing now,
    never listed as where documents are."""
    if _holds_documents(snapshot, folder):
        return ""
    roots = [root for root in snapshot.roots() if not root.startswith(RECORD_PREFIX)]
    empty = [root for root in roots if not _holds_documents(snapshot, root)]
    if not empty:
        there = f"the indexed folders are {_few(roots)}" if roots else "no folder is indexed"
    else:
        full = [root for root in roots if root not in empty]
        there = (
            f"the indexed folders with documents are {_few(full)}"
            if full
            else "no indexed folder holds documents now"
        )
    if folder in empty:
        return f"{folder} is indexed but holds no documents now; {there}"
    holding = [root for root in empty if _inside(folder, root)]
    if holding:
        return (
            f"nothing indexed is under {folder}; it is inside {holding[-1]}, which holds no "
            f"documents now; {there}"
        )
    below = [root for root in empty if _inside(root, folder)]
    if below:
        return (
            f"nothing indexed is under {folder}; the indexed folders there ({_few(below)}) "
            f"hold no documents now; {there}"
        )
    return f"nothing indexed is under {folder}; {there}"


def _holds_documents(snapshot: Snapshot, folder: str) -> bool:
    return snapshot.has_documents(SearchFilter(under=(folder,)))


def _inside(path: str, folder: str) -> bool:
    """Whether `path` is below `folder` (not `folder` itself)."""
    return path.startswith(folder.rstrip("/") + "/")


def _path_hint(snapshot: Snapshot, glob: str) -> str:
    """Why no path matches `glob`: a glob that does (a folder's files for a folder
    name), or the file types the index holds."""
    if _matches(snapshot, glob):
        return ""
    said = (
        f"no indexed path matches the glob {glob} (without a / it matches file names, with "
        "one the end of the path; * also crosses folders)"
    )
    for nearby in _nearby_globs(glob):
        if _matches(snapshot, nearby):
            return f"{said}; {nearby} matches"
    return f"{said}; {_types_there(snapshot)}"


def _nearby_globs(glob: str) -> list[str]:
    """Globs a user who wrote `glob` may have meant: a folder's files for a folder
    (`tutorial/`, `tutorial`), a name anywhere in the path for a bare word, the glob in
    lower case (paths compare case-sensitively)."""
    stem = glob.rstrip("/")
    nearby = []
    if stem and not any(char in stem for char in "*?["):
        nearby += [f"{stem}/*", f"*{stem}*"]
    elif stem and glob.endswith("/"):
        nearby.append(f"{stem}/*")
    if glob.lower() != glob:
        nearby.append(glob.lower())
    return nearby


def _matches(snapshot: Snapshot, glob: str) -> bool:
    return snapshot.has_documents(SearchFilter(paths=(glob,)))


def _types_there(snapshot: Snapshot) -> str:
    present = [name for name in FILE_TYPES if snapshot.has_documents(SearchFilter(types=(name,)))]
    return f"the types here are {_few(present)}" if present else "the index holds no file"


def _type_hint(snapshot: Snapshot, kind: str) -> str:
    if snapshot.has_documents(SearchFilter(types=(kind,))):
        return ""
    return f"no indexed file is of type {kind}; {_types_there(snapshot)}"


def _where_hints(snapshot: Snapshot, conditions: tuple[WhereCondition, ...]) -> list[str]:
    keys = snapshot.metadata_keys()
    hints = []
    for condition in conditions:
        given = f"where {condition}"
        if condition.matches_nothing:
            hints.append(f"{given}: an empty list of values matches nothing (give one or more)")
            continue
        if not keys:
            return [*hints, f"{given}: this index holds no records (only records have metadata)"]
        key = condition.key
        if key not in keys:
            hints.append(
                f"{given}: no record has the metadata key {key}; the keys are {_few(keys)}"
            )
            continue
        if snapshot.has_documents(SearchFilter(metadata=(condition,))):
            continue
        if condition.operator != "=":
            hints.append(f"{given}: no record's {key} is {condition.operator} {condition.given}")
            continue
        spellings = {
            stored
            for text in condition.texts
            for stored in snapshot.metadata_values_ignoring_case(key, text)
        }
        held = ", ".join(f"{key}={stored}" for stored in sorted(spellings)[:SHOWN])
        hints.append(
            f"{given}: no record has that value" + (f"; records hold {held}" if held else "")
        )
    return hints


def _few(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
