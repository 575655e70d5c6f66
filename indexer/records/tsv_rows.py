"""TSV as tab-separated values, not CSV with tabs: one record a line, no quoting.

A line is split at every tab; a quote is an ordinary character. A tab, a line break or a
backslash inside a field is written as the linear TSV convention (and PostgreSQL's
`COPY` text format) writes it: `\\t`, `\\n`, `\\r`, `\\\\`. A backslash before any other
character stands for itself (`C:\\data` is read as written), so only a backslash that
comes before `t`, `n`, `r` or another backslash needs doubling. A line may end in CRLF.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_ESCAPE = re.compile(r"\\([\\tnr])")
_ESCAPED = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


def tsv_rows(text: str) -> Iterator[tuple[int, list[str]]]:
    """Each line of `text` (numbered from 1) as its fields, unescaped; an empty line
    (the end of the last line included) as no fields."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        line = line.removesuffix("\r")
        yield number, [unescaped(field) for field in line.split("\t")] if line else []


def unescaped(field: str) -> str:
    """A field's text: its `\\t`, `\\n`, `\\r` and `\\\\` escapes replaced."""
    if "\\" not in field:
        return field
    return _ESCAPE.sub(lambda match: _ESCAPED[match.group(1)], field)
