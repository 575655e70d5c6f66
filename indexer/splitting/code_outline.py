"""Definitions in source code as headings, where a line pattern finds them cheaply.

Python: `def` and `class` at the top level (level 1) and the methods of a top-level class
(level 2). JavaScript and TypeScript, Go and Rust: functions, classes and types that start
at the first column (level 1). A definition's section starts at the decorators,
attributes and comments written directly above it. No parser is run: a definition inside
a multi-line string is taken for one, which costs nothing but a boundary.
"""

from __future__ import annotations

import re

from indexer.reading.outline import Heading, Line, lines_of

_PYTHON_DEFINITION = re.compile(
    r"^(?P<indent>[ \t]*)(?:async[ \t]+)?(?P<kind>def|class)[ \t]+(?P<name>\w+)"
)
_PYTHON_PREAMBLE = re.compile(r"^[ \t]*[@#]")
_FIRST_COLUMN = {
    "javascript": re.compile(
        r"^(?:export[ \t]+)?(?:default[ \t]+)?(?:declare[ \t]+)?(?:abstract[ \t]+)?"
        r"(?:async[ \t]+)?(?P<kind>function\*?|class|interface|enum|type)[ \t]+(?P<name>[\w$]+)"
        r"|^(?:export[ \t]+)?(?P<binding>const|let|var)[ \t]+(?P<arrow>[\w$]+)[ \t]*="
        r"[ \t]*(?:async[ \t]*)?(?:\([^)]*\)|[\w$]+)[ \t]*=>"
    ),
    "go": re.compile(r"^(?P<kind>func|type)[ \t]+(?:\([^)]*\)[ \t]*)?(?P<name>\w+)"),
    "rust": re.compile(
        r"^(?:pub(?:\([^)]*\))?[ \t]+)?(?:(?:async|const|unsafe|extern(?:[ \t]+\"\w+\")?)[ \t]+)*"
        r"(?P<kind>fn|struct|enum|trait|impl|mod|union|macro_rules!)[ \t]*(?:<[^>]*>[ \t]*)?"
        r"(?P<name>[\w:]+)"
    ),
}
_C_STYLE_PREAMBLE = re.compile(r"^[ \t]*(?://|/\*|\*|#\[|@)")
# The languages outlined here: the `language` of formats in `indexer.reading.formats`.
OUTLINED_LANGUAGES = ("python", *_FIRST_COLUMN)


def code_outline(text: str, kind: str) -> list[Heading]:
    """The definitions of source code of `kind` (one of `OUTLINED_LANGUAGES`) as headings."""
    lines = lines_of(text)
    if kind == "python":
        return _python_outline(lines)
    pattern = _FIRST_COLUMN[kind]
    found = []
    for index, line in enumerate(lines):
        if match := pattern.match(line.text):
            kind_word = match.group("kind") or match.group("binding")
            name = match.group("name") or match.group("arrow")
            start = _preamble_start(lines, index, _C_STYLE_PREAMBLE)
            found.append(Heading(start, line.end, 1, f"{kind_word} {name}"))
    return found


def _python_outline(lines: list[Line]) -> list[Heading]:
    found = []
    in_class = False  # whether the last top-level definition is a class
    method_indent: str | None = None
    for index, line in enumerate(lines):
        match = _PYTHON_DEFINITION.match(line.text)
        if not match:
            if line.text[:1].isalnum() or line.text[:1] == "_":
                in_class = False  # a top-level statement after the class: its block ended
            continue
        indent, kind = match.group("indent"), match.group("kind")
        if not indent:
            level, in_class, method_indent = 1, kind == "class", None
        elif in_class and (method_indent is None or indent == method_indent):
            level, method_indent = 2, indent
        else:
            continue
        start = _preamble_start(lines, index, _PYTHON_PREAMBLE, indent)
        found.append(Heading(start, line.end, level, f"{kind} {match.group('name')}"))
    return found


def _preamble_start(lines: list[Line], index: int, preamble: re.Pattern, indent: str = "") -> int:
    """Where the decorators and comments directly above line `index` start."""
    first = index
    while first > 0:
        above = lines[first - 1].text
        if not (preamble.match(above) and above.startswith(indent) and above.strip()):
            break
        if indent == "" and above[:1].isspace():
            break
        first -= 1
    return lines[first].start
