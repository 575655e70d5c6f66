"""Find the files to index under a folder and read each into a `Document`."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from stat import S_ISREG

from indexer.errors import (
    InvalidIgnoreFile,
    ReadingTooSlow,
    SourceNotFound,
    UnindexableContent,
    UnreadableFile,
)
from indexer.reading.formats import file_format
from indexer.reading.limits import MAX_TEXT_CHARACTERS, text_over_limit
from indexer.reading.links import leads_inside, opened_inside, real_folder
from indexer.reading.rules import RootRules, pattern_error
from indexer.reading.text_layout import Layout, text_layout

SKIPPED_FOLDERS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"}
)
IGNORE_FILE = ".ctxsearchignore"
# Files above this size are reported as failed instead of being read into memory.
_MB = 1024 * 1024
DEFAULT_MAX_FILE_BYTES = 20 * _MB


@dataclass(frozen=True)
class SourceFile:
    """A file found by the walk, before it is read.

    `size`, `mtime_ns`, `ctime_ns` and `inode` are what the walk saw of it: a file whose
    four are those stored is unchanged, and is not read (a copy that kept the size and
    the mtime has a new ctime). `confined_to` is the root whose real folder its content
    must come from when it is read (None: wherever its links lead); `leads_outside` says
    it is a link its root's rules follow outside the root.
    """

    path: Path
    size: int
    mtime_ns: int
    ctime_ns: int | None = None
    inode: int | None = None
    confined_to: Path | None = None
    leads_outside: bool = False


@dataclass(frozen=True)
class Document:
    """The text of one file, with what identifies its content."""

    path: Path
    text: str
    size: int
    mtime_ns: int
    sha256: str
    layout: Layout | None = None  # where parts of `text` came from (`text_layout.py`)
    ctime_ns: int | None = None  # as the walk saw them (see `SourceFile`)
    inode: int | None = None


def path_text(path: Path | str) -> str:
    """A path as text that any store can keep and any terminal can show.

    File names are bytes; Python decodes the ones that are not UTF-8 with lone
    surrogates, which no database accepts. Those bytes become `\\xNN` escapes; every
    other name is unchanged. The same path always gives the same text, so a file is
    recognised from one run to the next.
    """
    return os.fsencode(path).decode("utf-8", "backslashreplace")


# Called with a folder the walk could not list and the reason.
UnreadableFolder = Callable[[Path, str], None]
# Called with a link the walk does not follow and the reason.
SkippedLink = Callable[[Path, str], None]


def is_indexable(path: Path) -> bool:
    """Whether a file's name ends in the extension of a format read
    (`indexer.reading.formats`)."""
    return file_format(path.name) is not None


def walk_folder(
    root: Path,
    on_unreadable: UnreadableFolder | None = None,
    rules: RootRules | None = None,
    on_skipped: SkippedLink | None = None,
) -> Iterator[SourceFile]:
    """Yield every indexable file under `root`, in a stable order.

    Hidden files and folders, version-control and dependency folders are skipped, and so
    is whatever the patterns of a `.ctxsearchignore` file at the root match (gitignore
    syntax), and what `rules` leave out (by default: web assets; see `indexer.reading.rules`).
    Folder symlinks are not followed, so a symlink loop cannot trap the walk. A file link
    whose target is outside the root's real folder is not followed either, unless the
    rules follow links outside (see `indexer.reading.links`); such a link, and a folder
    link that leads outside, is reported to `on_skipped` with the reason.
    A folder that cannot be listed is reported to `on_unreadable` (its files are unknown,
    not gone); the root itself must be readable (`SourceNotFound`), and its ignore file
    usable (`InvalidIgnoreFile`, before anything is yielded). `root` may be a link: it
    is walked where it leads now, and its files are named under it.
    """
    root = Path(root)
    if not root.exists():
        raise SourceNotFound(f"{root}: no such folder")
    if not root.is_dir():
        raise SourceNotFound(f"{root}: not a folder (give the folder that holds it)")
    try:
        os.scandir(root).close()
    except OSError as error:
        raise SourceNotFound(f"{root}: cannot read the folder ({error.strerror})") from error
    ignored = replace(rules or RootRules(), ignore_file=tuple(_ignore_lines(root)))
    real_root = real_folder(root)
    follow = ignored.follow_links_outside

    def unreadable(error: OSError) -> None:
        if on_unreadable is not None and error.filename is not None:
            on_unreadable(Path(error.filename), error.strerror or str(error))

    def skipped(path: Path, reason: str) -> None:
        if on_skipped is not None:
            on_skipped(path, reason)

    for folder, subfolders, files in os.walk(root, onerror=unreadable, followlinks=False):
        relative = Path(folder).relative_to(root)
        subfolders[:] = sorted(
            name
            for name in subfolders
            if not name.startswith(".")
            and name not in SKIPPED_FOLDERS
            and not ignored.skips_folder(f"{(relative / name).as_posix()}/")
        )
        for name in subfolders:  # os.walk lists folder links, and does not go into them
            path = Path(folder, name)
            if path.is_symlink() and not leads_inside(path, real_root):
                skipped(path, _outside_folder_link(path, root))
        for name in sorted(files):
            path = Path(folder, name)
            if name.startswith(".") or not is_indexable(path):
                continue
            if ignored.skips_file((relative / name).as_posix()):
                continue
            try:
                stat = path.stat()
            except OSError:
                continue  # a dangling symlink or a symlink loop: nothing to read
            if not S_ISREG(stat.st_mode):
                continue  # a FIFO or a device would block or never end
            outside = path.is_symlink() and not leads_inside(path, real_root)
            if outside and not follow:
                skipped(path, _outside_file_link(path, root))
                continue
            yield SourceFile(
                path=path.absolute(),
                size=stat.st_size,
                mtime_ns=stat.st_mtime_ns,
                ctime_ns=stat.st_ctime_ns,
                inode=signed_inode(stat.st_ino),
                confined_to=None if follow else root,
                leads_outside=outside,
            )


def signed_inode(inode: int) -> int:
    """An inode number as the signed 64-bit integer SQL columns hold (some file systems
    use all 64 bits)."""
    return inode - (1 << 64) if inode >= 1 << 63 else inode


def _outside_file_link(link: Path, root: Path) -> str:
    target = path_text(os.path.realpath(link))
    return (
        f"a link to {target}, outside {path_text(root)}: not followed "
        "(--follow-links-outside follows such links)"
    )


def _outside_folder_link(link: Path, root: Path) -> str:
    target = path_text(os.path.realpath(link))
    return (
        f"a link to the folder {target}, outside {path_text(root)}: not followed "
        "(links to folders never are; index that folder on its own)"
    )


def _read_bounded(path: Path, max_bytes: int, confined_to: Path | None) -> bytes:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise UnreadableFile(error.strerror or str(error)) from error
    try:
        status = os.fstat(descriptor)
        if confined_to is not None and not opened_inside(
            descriptor, path, real_folder(confined_to)
        ):
            raise UnreadableFile(
                f"it leads outside {path_text(confined_to)} now (a link changed since the "
                "scan): not read"
            )
        if not S_ISREG(status.st_mode):
            raise UnreadableFile("not a regular file any more (a FIFO, socket or device)")
        if status.st_size > max_bytes:
            raise UnindexableContent(
                f"{status.st_size / _MB:.1f} MB is over the {max_bytes / _MB:.0f} MB size cap"
            )
        chunks, total = [], 0
        while block := os.read(descriptor, min(1 << 20, max_bytes + 1 - total)):
            chunks.append(block)
            total += len(block)
            if total > max_bytes:
                raise UnreadableFile(f"grew over the {max_bytes / _MB:.0f} MB size cap")
        return b"".join(chunks)
    except OSError as error:
        raise UnreadableFile(error.strerror or str(error)) from error
    finally:
        os.close(descriptor)


def _kind(path: Path) -> str:
    return path.suffix.lower().lstrip(".").upper() or "file"


def _reader_failure(path: Path, error: Exception) -> str:
    kind = _kind(path)
    detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
    what = "an unsupported feature" if isinstance(error, NotImplementedError) else "an error"
    return f"the {kind} reader hit {what} ({type(error).__name__}{': ' + detail if detail else ''})"


def _ignore_lines(root: Path) -> list[str]:
    """The lines of the root's ignore file, each checked (`InvalidIgnoreFile` if not)."""
    rules = root / IGNORE_FILE
    if not rules.is_file():
        return []
    try:
        lines = rules.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise InvalidIgnoreFile(f"{path_text(rules)}: not UTF-8 text ({error.reason})") from error
    except OSError as error:
        why = error.strerror or str(error)
        raise InvalidIgnoreFile(f"{path_text(rules)}: cannot be read ({why})") from error
    for number, line in enumerate(lines, start=1):
        if why := pattern_error(line):
            raise InvalidIgnoreFile(f"{path_text(rules)} line {number}: {why}")
    return lines


def read_document(source: SourceFile, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Document:
    """Read and decode one file; raise `UnreadableFile` with the reason when that fails.

    Whatever goes wrong with one file (a reader's own error included) is that file's
    failure, never the run's. The file is opened without blocking and checked to still
    be a regular file (it may have become a FIFO since the walk), and, for a file of a
    root that does not follow links outside it, to lie in that root's real folder (a link
    may have been swapped since the walk: the file opened is checked), and at most
    `max_bytes` are read, whatever its size became. Its text may not pass
    `MAX_TEXT_CHARACTERS` (the readers of containers also stop their work at the limits
    of `indexer.reading.limits`).

    Once its bytes are read whole, a failure to make text of them is a verdict on those
    bytes (`UnindexableContent`: the same bytes always fail), but for the time limit
    (`ReadingTooSlow`); a failure to read them (`UnreadableFile`) may pass.
    """
    data = _read_bounded(source.path, max_bytes, source.confined_to)
    found = file_format(source.path.name)
    if found is None:
        raise UnindexableContent("ctxsearch reads no format of this extension")
    try:
        text, layout = found.read(data)
        if len(text) > MAX_TEXT_CHARACTERS:  # (a text file read with a larger `max_bytes`)
            raise text_over_limit(_kind(source.path))
        if layout is None:
            layout = text_layout(text, found.text_kind)
    except ReadingTooSlow:
        raise
    except UnreadableFile as error:  # a reader's own verdict on these bytes
        raise UnindexableContent(str(error)) from error
    except Exception as error:  # a reader's bug or an unsupported feature: this file only
        raise UnindexableContent(_reader_failure(source.path, error)) from error
    return Document(
        path=source.path,
        text=text,
        size=len(data),
        mtime_ns=source.mtime_ns,
        sha256=hashlib.sha256(data).hexdigest(),
        layout=layout,
        ctime_ns=source.ctime_ns,
        inode=source.inode,
    )
