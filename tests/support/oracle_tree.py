"""The folder tree the oracle machine changes: where files may be, and what they hold.

Texts are made of a small vocabulary (so the fixed queries find something) and carry
the shape of their kind: a Markdown file is written with a `# ` heading line, an HTML
file with its `<html>` element, a plain-text file with neither. Two files of different
kinds therefore never hold the same bytes, unless a rule that means to (a rename that
changes only the extension, a link under another extension, a text laid out as another
kind under the same name) makes them so. Files of data (`data_text`), a folder outside the tree that
links may reach (`make_outside`) and the releases a root that is a symlink points to
(`make_releases`) are made here too.
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

from tests.support.crash_harness import WORDS

# Folders of the tree (relative to it), parents first; roots are chosen among them.
FOLDERS = ("w", "w/sub", "w/sub/deep", "w/notes", "v", "v/x")
ROOTS = ("w", "w/sub", "v")
# File names: a case-sibling pair, non-ASCII UTF-8, and a name that is not UTF-8 at all.
NAMES = ("a", "A", "b", "page", "café", os.fsdecode(b"caf\xe9"), "two words")
KINDS = (".txt", ".md", ".html")
EXCLUDES = ("*.html", "notes/", "A.*", "deep/", "caf*")


def paragraphs(seed: int, longest: int = 60) -> list[str]:
    """One to three paragraphs of vocabulary words (the same for the same seed)."""
    generator = random.Random(seed)
    return [
        " ".join(generator.choice(WORDS) for _ in range(generator.randint(4, longest))) + "."
        for _ in range(generator.randint(1, 3))
    ]


def title(seed: int) -> str:
    """A heading made of two words."""
    generator = random.Random(seed + 7919)
    return f"{generator.choice(WORDS).title()} {generator.choice(WORDS)}"


def text_of_kind(kind: str, parts: list[str], heading: str) -> str:
    """Paragraphs laid out as a file of `kind` (see the module docstring)."""
    if kind == ".md":
        return f"# {heading}\n\n" + "\n\n".join(parts) + "\n"
    if kind == ".html":
        body = "".join(f"<p>{part}</p>" for part in parts)
        head = f"<head><title>{heading}</title></head>"
        return f"<html>{head}<body><h1>{heading}</h1>{body}</body></html>"
    return "\n\n".join(parts) + "\n"


def new_text(kind: str, seed: int, longest: int = 60) -> str:
    """A new file's text."""
    return text_of_kind(kind, paragraphs(seed, longest), title(seed))


def parts_of(kind: str, text: str) -> tuple[list[str], str]:
    """A file's paragraphs and heading, read back from its text."""
    if kind == ".html":
        found = re.findall(r"<p>(.*?)</p>", text, flags=re.S)
        heading = re.search(r"<h1>(.*?)</h1>", text)
        return found, heading.group(1) if heading else "Untitled page"
    lines = text.split("\n\n")
    heading = next((line[2:] for line in lines if line.startswith("# ")), "Untitled note")
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")], heading


def edited(kind: str, text: str, how: str, seed: int) -> str:
    """`text` with a paragraph appended or prepended, or one word in the middle changed."""
    parts, heading = parts_of(kind, text)
    extra = paragraphs(seed, 20)[0]
    if how == "append":
        parts = [*parts, extra]
    elif how == "prepend":
        parts = [extra, *parts]
    elif parts:
        generator = random.Random(seed)
        which = generator.randrange(len(parts))
        words = parts[which].split(" ")
        words[generator.randrange(len(words))] = generator.choice(WORDS)
        parts = [*parts[:which], " ".join(words), *parts[which + 1 :]]
    else:
        parts = [extra]
    return text_of_kind(kind, parts, heading)


def converted(old_kind: str, new_kind: str, text: str) -> str:
    """The same paragraphs laid out as another kind (so that the bytes change)."""
    parts, heading = parts_of(old_kind, text)
    return text_of_kind(new_kind, parts or ["river bank."], heading)


def listing(tree: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """The tree's regular files, its symlinks (to anything, or dangling), and its real
    folders (the tree itself first), in a stable order; symlinks are not followed."""
    files, links, folders = [], [], [tree]
    for folder, subfolders, names in os.walk(tree, followlinks=False):
        subfolders.sort()
        for name in sorted(names + [d for d in subfolders if Path(folder, d).is_symlink()]):
            path = Path(folder, name)
            if path.is_symlink():
                links.append(path)
            elif path.is_file():
                files.append(path)
        folders += [Path(folder, d) for d in subfolders if not Path(folder, d).is_symlink()]
    return files, links, folders


def has_link_on_the_way(path: Path, tree: Path) -> bool:
    """Whether `path` or a folder between `tree` and it is a symlink."""
    relative = path.relative_to(tree)
    return any(
        (tree / Path(*relative.parts[: n + 1])).is_symlink() for n in range(len(relative.parts))
    )


# -- structure edits -------------------------------------------------------------------

STRUCTURE_EDITS = (
    "heading to line",
    "line to heading",
    "heading level",
    "new section",
    "move section",
    "other layout",
)
_HTML_BLOCK = re.compile(r"<(h[1-6]|p)>(.*?)</\1>", flags=re.S)


def restructured(kind: str, text: str, how: str, seed: int) -> str | None:
    """`text` (a file of `kind`) with its structure edited as `how` says (one of
    `STRUCTURE_EDITS`), its words kept; None when there is nothing to edit that way.

    A heading line made a plain line or a line made a heading, a heading's level
    changed, a new section started before a paragraph, a section (or, with none, a
    paragraph) moved, or the whole text laid out as another kind under the same name
    (a Markdown file of plain prose, or of HTML)."""
    generator = random.Random(seed)
    if how == "other layout":
        parts, heading = parts_of(kind, text)
        other = generator.choice([k for k in KINDS if k != kind])
        return text_of_kind(other, parts or ["river bank."], heading)
    if kind == ".html":
        return _restructured_html(text, how, generator)
    blocks = [block for block in text.strip("\n").split("\n\n") if block.strip()]
    edited = _restructured_blocks(blocks, how, generator, seed)
    return None if edited is None else "\n\n".join(edited) + "\n"


def _restructured_blocks(
    blocks: list[str], how: str, generator: random.Random, seed: int
) -> list[str] | None:
    """Markdown (or plain text) blocks, a block being a heading line or a paragraph."""
    headings = [n for n, block in enumerate(blocks) if block.startswith("#")]
    paragraphs_at = [n for n, block in enumerate(blocks) if not block.startswith("#")]
    if how == "heading to line" and headings:
        n = generator.choice(headings)
        return [*blocks[:n], blocks[n].lstrip("#").strip(), *blocks[n + 1 :]]
    if how == "line to heading" and paragraphs_at:
        n = generator.choice(paragraphs_at)
        words = blocks[n].split(" ")
        line = "#" * generator.randint(1, 3) + " " + " ".join(words[:4]).rstrip(".")
        rest = [" ".join(words[4:])] if words[4:] else []
        return [*blocks[:n], line, *rest, *blocks[n + 1 :]]
    if how == "heading level" and headings:
        n = generator.choice(headings)
        level = len(blocks[n]) - len(blocks[n].lstrip("#"))
        other = generator.choice([k for k in (1, 2, 3) if k != level])
        return [*blocks[:n], "#" * other + blocks[n][level:], *blocks[n + 1 :]]
    if how == "new section" and paragraphs_at:
        n = generator.choice(paragraphs_at)
        return [*blocks[:n], "## " + title(seed), *blocks[n:]]
    if how == "move section" and len(blocks) > 1:
        sections = _sections(blocks)
        if len(sections) < 2:
            sections = [[block] for block in blocks]
        moved = sections.pop(generator.randrange(len(sections)))
        sections.insert(generator.randrange(len(sections) + 1), moved)
        edited = [block for section in sections for block in section]
        return edited if edited != blocks else None
    return None


def _sections(blocks: list[str]) -> list[list[str]]:
    """Blocks grouped into sections, each from a heading line to the next (the blocks
    before the first heading are a section of their own)."""
    sections: list[list[str]] = []
    for block in blocks:
        if block.startswith("#") or not sections:
            sections.append([])
        sections[-1].append(block)
    return sections


def _restructured_html(text: str, how: str, generator: random.Random) -> str | None:
    """An HTML file's headings and paragraphs (`<h1>`..`<h6>`, `<p>`) edited alike."""
    blocks = list(_HTML_BLOCK.finditer(text))
    headings = [m for m in blocks if m.group(1) != "p"]
    paragraphs_found = [m for m in blocks if m.group(1) == "p"]

    def replaced(match: re.Match, tag: str, inner: str | None = None) -> str:
        inner = match.group(2) if inner is None else inner
        return text[: match.start()] + f"<{tag}>{inner}</{tag}>" + text[match.end() :]

    if how == "heading to line" and headings:
        return replaced(generator.choice(headings), "p")
    if how in ("line to heading", "new section") and paragraphs_found:
        return replaced(generator.choice(paragraphs_found), f"h{generator.randint(1, 3)}")
    if how == "heading level" and headings:
        match = generator.choice(headings)
        level = generator.choice([k for k in (1, 2, 3) if f"h{k}" != match.group(1)])
        return replaced(match, f"h{level}")
    if how == "move section" and len(blocks) > 1:
        first, second = generator.sample(blocks, 2)
        first, second = sorted((first, second), key=lambda m: m.start())
        return (
            text[: first.start()]
            + second.group(0)
            + text[first.end() : second.start()]
            + first.group(0)
            + text[second.end() :]
        )
    return None


# -- content that is not language, replacements that keep size and mtime ---------------

DATA_PREFIX = "data:application/octet-stream;base64,"
# Over the characters below which any text is read as language (`indexer.reading.content`).
DATA_CHARACTERS = 24_000
_DATA_LINE = 1_000  # characters per line of the blob: far longer than any word


def data_text(kind: str, seed: int) -> str:
    """A file of `kind` whose text is a base64 blob (a data URL, in long lines): text
    that decodes, but no language, so a run skips the file."""
    import base64

    raw = random.Random(seed).randbytes(DATA_CHARACTERS * 3 // 4)
    blob = DATA_PREFIX + base64.b64encode(raw).decode("ascii")
    lines = "\n".join(blob[n : n + _DATA_LINE] for n in range(0, len(blob), _DATA_LINE))
    if kind == ".html":
        return f"<html><body><p>{lines}</p></body></html>"
    return lines + "\n"


def is_data(text: str) -> bool:
    """Whether a file's text is one `data_text` made (perhaps edited since)."""
    return DATA_PREFIX in text and sum(len(w) for w in text.split() if len(w) > 100) > len(text) / 2


def same_size_variant(text: str, seed: int) -> str | None:
    """`text` with one vocabulary word replaced by another of the same length (so the
    same bytes long, other words), or None when it holds no such word."""
    generator = random.Random(seed)
    places = [
        match
        for match in re.finditer(r"[a-z]+", text)
        if match.group(0) in WORDS
        and any(len(w) == len(match.group(0)) and w != match.group(0) for w in WORDS)
    ]
    if not places:
        return None
    match = generator.choice(places)
    word = match.group(0)
    other = generator.choice([w for w in WORDS if len(w) == len(word) and w != word])
    return text[: match.start()] + other + text[match.end() :]


def replace_keeping_stat(path: Path, text: str, how: str) -> None:
    """Write `text` (as many bytes as the file holds) to `path` and give it back its
    mtime: in place (`cp -p` over it), or written aside and renamed over it (`rsync -t`,
    an archive extracted): its size and mtime are as they were, its content is not."""
    status = path.stat()
    if how == "in place":
        path.write_text(text)
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
        return
    aside = path.with_name(f".{path.name}.tmp")
    aside.write_text(text)
    os.utime(aside, ns=(status.st_atime_ns, status.st_mtime_ns))
    os.replace(aside, path)


# -- outside the tree ------------------------------------------------------------------

# A word no text of the tree holds: found in an index, it came from outside a root.
SECRET = "quokkasecret"


def make_outside(folder: Path) -> Path:
    """A folder next to the tree (no root holds it) with files a link may point to: a
    fake key and notes holding `SECRET`, and a subfolder of them."""
    (folder / "keys").mkdir(parents=True)
    for name, seed in (("id_rsa.txt", 61), ("secret.md", 62), ("keys/deploy.txt", 63)):
        kind = Path(name).suffix
        (folder / name).write_text(
            text_of_kind(kind, [f"{SECRET} {part}" for part in paragraphs(seed, 20)], SECRET)
        )
    return folder


def resolves_inside(path: Path, folder: Path) -> bool:
    """Whether `path`, every link on the way followed, is `folder` or lies under it."""
    real, boundary = os.path.realpath(path), os.path.realpath(folder)
    return real == boundary or real.startswith(boundary.rstrip("/") + "/")


def path_of(stored: str) -> Path:
    """The path a stored path text names (`indexer.reading.sources.path_text` undone:
    its `\\xNN` escapes are the bytes of a name that is not UTF-8)."""
    raw = re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), stored.encode())
    return Path(os.fsdecode(raw))


# -- a root that is a symlink ----------------------------------------------------------

LINKED_ROOT = "current"  # in the tree: a symlink to one of the releases, indexed as a root
RELEASES = ("r1", "r2")
# Every file of a release has this mtime (a reproducible build's), so a file of one
# release and its namesake in the other may have the same size and mtime.
RELEASE_MTIME_NS = 1_700_000_000 * 10**9


def make_releases(folder: Path) -> None:
    """Two releases of the same documents (`ln -sfn releases/r2 current` swaps them):
    a file in both with other words of the same length, one only in each, one the same."""
    for release in RELEASES:
        (folder / release).mkdir(parents=True)
    guide = new_text(".md", 71, 40)
    changed = same_size_variant(guide, 72)
    assert changed is not None
    same = new_text(".txt", 75)
    files = {
        "r1": {"guide.md": guide, "old.txt": new_text(".txt", 73), "same.txt": same},
        "r2": {"guide.md": changed, "new.md": new_text(".md", 74), "same.txt": same},
    }
    for release, texts in files.items():
        for name, text in texts.items():
            path = folder / release / name
            path.write_text(text)
            os.utime(path, ns=(RELEASE_MTIME_NS, RELEASE_MTIME_NS))
