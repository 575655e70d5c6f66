"""The folder tree the oracle machine changes: where files may be, and what they hold.

Texts are made of a small vocabulary (so the fixed queries find something) and carry
the shape of their kind: a Markdown file always has a `# ` heading line, an HTML file
its `<html>` element, a plain-text file neither. Two files of different kinds therefore
never hold the same bytes, unless a rule that means to (a rename that changes only the
extension, a link under another extension) makes them so.
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
