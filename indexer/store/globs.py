"""Path globs as SQLite's GLOB reads them: checked, and written as PostgreSQL regexes.

The embedded store matches `--path` globs with SQLite's GLOB and PostgreSQL with `~`, so
the regex is built from GLOB's own reading of the glob: `*` any run of characters (also
across `/`), `?` one character, `[...]` one character of a set whose ranges are `a-z`,
negated by a leading `^`, with a leading `]` taken literally; every other character,
inside a set or not, stands for itself. A glob no path can match because of its sets (a
reversed range such as `[z-a]`, a `[` never closed) is refused as a bad query on every
backend, rather than left to match nothing on one and break the query on the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from indexer.errors import InvalidQuery


@dataclass(frozen=True)
class CharacterSet:
    """One `[...]` of a glob: its (first, last) ranges (single characters have first ==
    last), whether it is negated, and the index of the glob's character after it."""

    ranges: tuple[tuple[str, str], ...]
    negated: bool
    end: int


def character_set(glob: str, start: int) -> CharacterSet:
    """Read the set that opens at `glob[start]` (a `[`) as SQLite's GLOB does."""
    index = start + 1
    negated = glob[index : index + 1] == "^"
    index += negated
    ranges: list[tuple[str, str]] = []
    if glob[index : index + 1] == "]":  # a leading `]` is itself, and starts no range
        ranges.append(("]", "]"))
        index += 1
    previous = ""
    while index < len(glob) and glob[index] != "]":
        char = glob[index]
        if char == "-" and previous and index + 1 < len(glob) and glob[index + 1] != "]":
            last = glob[index + 1]
            if previous > last:
                raise InvalidQuery(
                    f"--path {glob!r}: the reversed range {previous}-{last} matches nothing "
                    f"(write {last}-{previous})"
                )
            ranges[-1] = (previous, last)
            previous, index = "", index + 2
            continue
        ranges.append((char, char))
        previous, index = char, index + 1
    if index >= len(glob):
        raise InvalidQuery(
            f"--path {glob!r}: a [ is never closed, so nothing matches (write [[] for a [)"
        )
    return CharacterSet(tuple(ranges), negated, index + 1)


def check_glob(glob: str) -> None:
    """Raise `InvalidQuery` if a set of the glob makes it match nothing on any backend."""
    glob_regex(glob)


def glob_regex(glob: str) -> str:
    """The glob as an anchored PostgreSQL regular expression that matches what SQLite's
    GLOB matches (`InvalidQuery` for a glob `check_glob` refuses)."""
    out, index = ["^"], 0
    while index < len(glob):
        char = glob[index]
        if char == "[":
            found = character_set(glob, index)
            body = "".join(
                _literal(first) if first == last else f"{_literal(first)}-{_literal(last)}"
                for first, last in found.ranges
            )
            out.append(f"[{'^' if found.negated else ''}{body}]")
            index = found.end
            continue
        out.append({"*": ".*", "?": "."}.get(char) or _literal(char))
        index += 1
    out.append("$")
    return "".join(out)


def _literal(char: str) -> str:
    """A character that stands for itself in a regex, inside a bracket expression or not
    (in PostgreSQL's regexes a backslash before any character but a letter or digit
    means that character)."""
    return char if char.isalnum() else "\\" + char
