"""Index a folder: diff it against the store, encode only what changed, publish at once.

For each run (a `Run`, see `indexer.runs.run`):
1. walk the folder and compare each file's size, mtime, ctime and inode with the store
   (links that lead outside the folder are skipped, unless its rules follow them);
2. delete the documents whose files are gone (the store drops them from every space);
3. stream the files that may have changed: read and chunk one file at a time (a file
   whose hash is unchanged only gets its new mtime, ctime and inode; a file that fails
   is reported and counted; its old version is kept if the failure may pass, and removed
   if the file's content is now what cannot be indexed, see `UnindexableContent`), and
   encode and store about `batch_chunks` chunks at a time into the run's change; the
   encoding runs in this process, or on a Ray cluster (`ray=`, see
   `indexer.runs.encoding`), and nothing else changes with it;
4. publish everything at once (see `Store.change`), or nothing if nothing changed;
5. fill the contextual space in published batches (`indexer.runs.fill`): the passages
   of step 3 are searchable by the lexical and static spaces from step 4 on.

The index is any `Store` (`indexer.store.base`): a folder, or a PostgreSQL URL.
"""

from __future__ import annotations

import stat
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from indexer.errors import SourceNotFound, UnindexableContent, UnreadableFile
from indexer.faults import kill_point
from indexer.reading.content import why_not_prose
from indexer.reading.formats import readable_summary
from indexer.reading.links import spellings
from indexer.reading.rules import RootRules, merged
from indexer.reading.sources import SourceFile, path_text, read_document, walk_folder
from indexer.runs.moves import MoveKey, move_key
from indexer.runs.nested_roots import RunRoot, nested_roots, owner
from indexer.runs.run import Pending, Run, index_totals
from indexer.store.backends import open_store, store_exists
from indexer.store.base import Change, Store, StoredDocument, Target

# A file with this much extracted text is indexed, but named in the run summary: one
# 700 KB release-notes file made over half of a documentation index's chunks.
LARGE_TEXT_CHARACTERS = 250_000
# The end of the reason of a failed or skipped file whose indexed version the run removed.
REMOVED_NOTE = "; its indexed version is removed"


@dataclass(frozen=True)
class FileFailure:
    """A file that could not be indexed, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class MovedFile:
    """A document found under a new path with the same content: kept, not re-encoded."""

    old_path: str
    path: str


@dataclass(frozen=True)
class FollowedLink:
    """A link followed to a file outside its root (the root's rules follow such links),
    with what the walk saw of that file: `watch` looks at it, as the folder's file
    watcher cannot see it."""

    path: str
    size: int
    mtime_ns: int
    ctime_ns: int | None
    inode: int | None


@dataclass(frozen=True)
class LargeFile:
    """A file indexed this run whose text is over `LARGE_TEXT_CHARACTERS`."""

    path: str
    characters: int
    chunks: int


@dataclass
class IndexSummary:
    """What one indexing run did.

    `failed`/`failures`: files (and folders) that could not be read; an older indexed
    version is kept when the failure may pass (no permission, an I/O error, the time
    limit) and removed when the file's content cannot be indexed (binary, corrupt, over
    a limit: `UnindexableContent`). `chunks`: the chunks written for added and updated
    files; `encoded`: how many of them went through the model (the others' text and
    settings were known: their stored vectors were reused). `skipped`/`skipped_files`:
    files not indexed, with why: text that is not language (such as a base64 blob; an
    older indexed version is removed), or a link that leads outside its root (not
    followed; its document, if one was indexed, is removed). `removed` counts the
    documents removed for any of these reasons as well as those whose files are gone;
    the reason of each such failed or skipped file ends with `REMOVED_NOTE`.
    `followed_links`: the links the root's rules followed outside it.
    `workers`: how many processes encoded this run's chunks (1 in this process, the Ray
    actors with `ray=`; 0 when nothing needed encoding). `query_export`: how queries of
    this index can skip torch: `ready` (the model's ONNX export, made once per model, is
    in the model cache), the reason it could not be made, or "" when this run did not
    load the model.
    """

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    failed: int = 0
    chunks: int = 0
    encoded: int = 0
    total_documents: int = 0
    total_chunks: int = 0
    seconds: float = 0.0
    failures: list[FileFailure] = field(default_factory=list)
    touched: int = 0  # unchanged content, new mtime recorded
    skipped: int = 0
    skipped_files: list[FileFailure] = field(default_factory=list)
    workers: int = 0
    query_export: str = ""
    # the --exclude/--include rules this run used (remembered for the folder)
    rules: dict = field(default_factory=dict)
    # files moved or renamed (same content): their chunks and vectors were kept
    moved: int = 0
    moved_files: list[MovedFile] = field(default_factory=list)
    # files encoded this run with over LARGE_TEXT_CHARACTERS of text (exclude them if
    # they swamp the results)
    large_files: list[LargeFile] = field(default_factory=list)
    # roots indexed on their own under this folder, brought up to date with their own
    # rules; and those whose folders are gone, forgotten (their files are this folder's)
    nested_roots: list[str] = field(default_factory=list)
    forgotten_roots: list[str] = field(default_factory=list)
    # the folder was not there (`missing_ok`): taken as empty, its documents removed
    missing: bool = False
    # links followed to files outside their root (`follow_links_outside`)
    followed_links: list[FollowedLink] = field(default_factory=list)
    # roots that are one file inside this folder, forgotten: their files are its own now
    taken_in_roots: list[str] = field(default_factory=list)
    # a file run's file lies under this folder root: that root's runs index it, and this
    # run changed nothing (see `indexer.runs.file_roots`)
    covered_by: str | None = None

    def changed_anything(self) -> bool:
        """Whether the run changed a document (added, updated, moved, or a new mtime)."""
        return bool(self.added or self.updated or self.touched or self.moved)

    def to_dict(self) -> dict:
        """The summary as plain JSON-ready values."""
        return asdict(self)


def index_folder(
    run: Run,
    folder: str | Path,
    wait: bool = False,
    exclude: list[str] | tuple[str, ...] | None = None,
    include: list[str] | tuple[str, ...] | None = None,
    default_excludes: bool | None = None,
    forget_rules: bool = False,
    allow_empty: bool = False,
    missing_ok: bool = False,
    follow_links_outside: bool | None = None,
) -> IndexSummary:
    """Bring the index up to date with `folder` in `run`; see `Indexer.index_folder`."""
    started = time.perf_counter()
    target = run.target
    folder = recorded_root(target, folder)
    missing = missing_ok and _no_folder_at(folder)
    if missing and not store_exists(target):
        raise SourceNotFound(f"{folder}: no such folder")
    rules = merged(
        _remembered_rules(target, folder),
        exclude,
        include,
        default_excludes,
        forget_rules,
        follow_links_outside,
    )
    unreadable: list[FileFailure] = []
    links: list[FileFailure] = []
    sources = (
        []
        if missing
        else list(
            walk_folder(
                folder,
                lambda path, why: unreadable.append(_folder_failure(path, why)),
                rules,
                lambda path, why: links.append(FileFailure(path_text(path), why)),
            )
        )
    )
    if not sources and not unreadable and not allow_empty and not missing:
        raise SourceNotFound(_nothing_to_index(folder, links))
    with run.open(wait) as store:
        summary = IndexSummary(failed=len(unreadable), failures=list(unreadable))
        summary.rules = rules.to_dict()
        summary.missing = missing
        candidates, gone, forgotten = _plan(store, RunRoot(folder, rules), sources, links, summary)
        kill_point("after-scan")
        with store.change() as change:
            if not missing:  # a root that is gone keeps its rules for its return
                change.record_root(folder, rules.to_json())
            for root in forgotten:  # its files are this folder's now: gone, or moved
                change.forget_root(root)
            if run.settings.index_type is not None:
                change.set_index_type(run.settings.index_type)
            if run.settings.quantize is not None:
                change.set_quantize(run.settings.quantize)
            # A new path whose content is that of a gone document, read the same way,
            # is that document moved or renamed: it keeps its chunks and vectors. What
            # is left of the gone is removed once every candidate has been read.
            movable: dict[MoveKey, list[StoredDocument]] = {}
            for document in gone:
                key = move_key(document.sha256, document.path)
                movable.setdefault(key, []).append(document)
            # Stored documents whose files' content can no longer be indexed: removed
            # with the gone once every candidate has been read.
            unindexable: list[int] = []
            run.encode_and_store(
                change,
                read_candidates(run, change, candidates, summary, movable, unindexable),
            )
            left = [document.id for same in movable.values() for document in same]
            change.remove_documents(left + unindexable)
            kill_point("after-delete")
        run.fill(store)
        count_stored(summary, run, store, removed=len(left) + len(unindexable))
    summary.query_export = run.export_query_model()
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def count_stored(summary: IndexSummary, run: Run, store: Store, removed: int) -> None:
    """What a run of a root stored and removed, and what the index holds after it."""
    stored = run.stored
    summary.added, summary.updated, summary.chunks = stored.added, stored.updated, stored.chunks
    summary.workers, summary.encoded = stored.workers, stored.encoded
    summary.removed = removed
    summary.total_documents, summary.total_chunks = index_totals(store)


def recorded_root(target: Target, folder: str | Path) -> Path:
    """The path a run over `folder` records it under (see `indexer.reading.links`): its
    own path, a link given staying the link, the links of the folders above it resolved;
    but a path given through a root recorded as a link (`index current`, then `index
    current/guide`) keeps that link, so that it nests in that root and follows its link."""
    given, *resolved_above = spellings(folder)
    if not resolved_above:
        return given
    own = resolved_above[0]
    if not store_exists(target):
        return own
    store = open_store(target)
    try:
        roots = store.roots_under(Path("/"))
    finally:
        store.close()
    text, own_text = path_text(given), path_text(own)
    through_a_link = any(_holds(root, text) and not _holds(root, own_text) for root in roots)
    return given if through_a_link else own


def _holds(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _remembered_rules(target: Target, folder: Path) -> RootRules:
    """The rules the folder's earlier runs left (the defaults for a new index)."""
    if not store_exists(target):
        return RootRules()
    store = open_store(target)
    try:
        return RootRules.from_json(store.root_rules(folder))
    finally:
        store.close()


def _nothing_to_index(folder: Path, links: list[FileFailure]) -> str:
    """Why a run refuses a folder with no file to index (most likely a wrong path)."""
    if links:
        return (
            f"{path_text(folder)}: no files to index here, only {len(links)} link(s) that "
            "lead outside it, not followed (--follow-links-outside follows links to files); "
            "nothing was changed"
        )
    return (
        f"{path_text(folder)}: no files to index here (readable types: {readable_summary()}); "
        "nothing was changed"
    )


def _plan(
    store: Store,
    run: RunRoot,
    sources: list[SourceFile],
    links: list[FileFailure],
    summary: IndexSummary,
) -> tuple[list[tuple[SourceFile, StoredDocument | None]], list[StoredDocument], list[str]]:
    """The files that may have changed, the documents whose files are gone, and the
    roots nested in the run's folder to forget: those whose folders are gone, and the
    roots that are one file (their files are the folder's now).

    `sources` are the files of the run's folder, and `links` the links its walk did not
    follow; each root nested in it is walked with its own rules, and a file (or a link)
    is the deepest root's (see `indexer.runs.nested_roots`): a link is checked against
    the root that holds it.
    """
    nested = nested_roots(store, run.path)
    roots = [run, *nested.present]
    not_looked_at = tuple(root.rstrip("/") + "/" for root in nested.unknown)
    walked = [
        source
        for source in sources
        if owner(path_text(source.path), roots) is run
        and not path_text(source.path).startswith(not_looked_at)
    ]
    _skip_links(links, run, roots, summary)
    for root in nested.present:
        walked += _walk_nested(root, roots, summary)
    summary.followed_links = [
        FollowedLink(path_text(s.path), s.size, s.mtime_ns, s.ctime_ns, s.inode)
        for s in walked
        if s.leads_outside
    ]
    summary.nested_roots = [path_text(root.path) for root in nested.present]
    summary.forgotten_roots = list(nested.gone)
    summary.taken_in_roots = list(nested.files)
    stored: dict[str, StoredDocument] = {}
    for root in [path_text(run.path), *nested.recorded]:
        stored.update(store.documents_under(Path(root)))
    candidates = _changed_candidates(walked, stored, summary)
    present = {path_text(source.path) for source in walked}
    # What an unreadable folder holds is unknown, not gone: its documents stay.
    unknown = not_looked_at + tuple(f.path.rstrip("/") + "/" for f in summary.failures)
    gone = [
        document
        for path, document in stored.items()
        if path not in present and not path.startswith(unknown)
    ]
    return candidates, gone, [*nested.gone, *nested.files]


def _walk_nested(root: RunRoot, roots: list[RunRoot], summary: IndexSummary) -> list[SourceFile]:
    """The files of a nested root, walked with its rules (not those under a deeper one)."""
    failures: list[FileFailure] = []
    links: list[FileFailure] = []
    try:
        found = list(
            walk_folder(
                root.path,
                lambda path, why: failures.append(_folder_failure(path, why)),
                root.rules,
                lambda path, why: links.append(FileFailure(path_text(path), why)),
            )
        )
    except SourceNotFound as error:  # unreadable (or just gone): its documents stay
        reason = str(error).removeprefix(f"{root.path}: ")
        failures.append(FileFailure(path_text(root.path), f"{reason}; its indexed files are kept"))
        found = []
    known = {failure.path for failure in summary.failures}
    for failure in failures:
        if failure.path not in known:
            summary.failed += 1
            summary.failures.append(failure)
    _skip_links(links, root, roots, summary)
    return [source for source in found if owner(path_text(source.path), roots) is root]


def _skip_links(
    links: list[FileFailure], walked: RunRoot, roots: list[RunRoot], summary: IndexSummary
) -> None:
    """Count the links the walk of `walked` did not follow, those of its own files: a link
    in a root nested in it is that root's walk's to judge."""
    for link in links:
        if owner(link.path, roots) is walked:
            summary.skipped += 1
            summary.skipped_files.append(link)


def _changed_candidates(
    sources: list[SourceFile], stored: dict[str, StoredDocument], summary: IndexSummary
) -> list[tuple[SourceFile, StoredDocument | None]]:
    candidates = []
    for source in sources:
        old = stored.get(path_text(source.path))
        if old and unchanged(old, source):
            summary.unchanged += 1
        else:
            candidates.append((source, old))
    return candidates


def unchanged(old: StoredDocument, source: SourceFile) -> bool:
    """Whether the file is as it was when read: the same size, mtime, ctime and inode
    (git's test). A copy that kept the size and the mtime has another ctime (or inode);
    a chmod or a touch changes the ctime too, and the file is read again (its content
    hash then finds it unchanged). A row from before ctime and inode were kept has
    neither: its file is read once more."""
    return (old.size, old.mtime_ns, old.ctime_ns, old.inode) == (
        source.size,
        source.mtime_ns,
        source.ctime_ns,
        source.inode,
    )


def read_candidates(
    run: Run,
    change: Change,
    candidates: list[tuple[SourceFile, StoredDocument | None]],
    summary: IndexSummary,
    movable: dict[MoveKey, list[StoredDocument]],
    unindexable: list[int],
) -> Iterator[Pending]:
    """Read and chunk the files that may have changed, one at a time.

    A file whose content hash is unchanged only has its mtime, ctime and inode
    recorded; a new file
    with the content of a gone document, read the same way (in `movable`, see
    `indexer.runs.moves`), takes that document over under its new path, keeping its
    chunks and vectors. A stored file whose content can no longer be indexed (skipped,
    or `UnindexableContent`) has its document's id put in `unindexable`, to remove.
    """
    if not candidates:
        return  # a run that only removes files or changes the index type needs no model
    manifest = change.manifest
    run.expect(len(candidates), sum(source.size for source, _old in candidates))
    for done, (source, old) in enumerate(candidates, start=1):
        try:
            document = read_document(source)
        except UnreadableFile as error:
            reason = str(error)
            if isinstance(error, UnindexableContent):
                reason += _removed(old, unindexable)
            summary.failed += 1
            summary.failures.append(FileFailure(path_text(source.path), reason))
        else:
            if reason := why_not_prose(document.text):
                reason += _removed(old, unindexable)
                summary.skipped += 1
                summary.skipped_files.append(FileFailure(path_text(source.path), reason))
            elif old is not None and old.sha256 == document.sha256:
                change.touch_document(old.id, document)
                summary.unchanged += 1
                summary.touched += 1
            elif old is None and movable.get(key := move_key(document.sha256, source.path)):
                moved = movable[key].pop()
                change.move_document(moved.id, document)
                summary.moved += 1
                summary.moved_files.append(MovedFile(moved.path, path_text(document.path)))
            else:
                # the model loads on the first file to chunk: touched and moved files
                # need none
                path = path_text(document.path)
                chunks = run.chunk(manifest, document.text, path, document.layout)
                if len(document.text) >= LARGE_TEXT_CHARACTERS:
                    summary.large_files.append(LargeFile(path, len(document.text), len(chunks)))
                run.read(done, source.size, len(chunks))
                yield Pending(document, chunks, old.id if old else None)
                continue
        run.read(done, source.size)


def _removed(old: StoredDocument | None, unindexable: list[int]) -> str:
    """Put the stored document of a file whose content cannot be indexed among those to
    remove; what its failure's reason says of that ("" when none was stored)."""
    if old is None:
        return ""
    unindexable.append(old.id)
    return REMOVED_NOTE


def _no_folder_at(path: Path) -> bool:
    """Whether nothing, or something that is no folder, is at `path` (a folder that cannot
    be looked at is there: the walk says why it cannot be read)."""
    try:
        return not stat.S_ISDIR(path.stat().st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False


def _folder_failure(path: Path, reason: str) -> FileFailure:
    return FileFailure(
        path_text(path), f"cannot list the folder ({reason}); its indexed files are kept"
    )
