"""Text that is safe to show: file names and snippets on a terminal, and JSON anywhere.

A file may be named `\\x1b[31mred` or hold a right-to-left override, and a name that is
not valid UTF-8 reaches Python as lone surrogates (`\\udcff`). Printed raw, the first
drives the terminal, the second reorders what is shown, the third cannot be encoded at
all. On a terminal each such character is shown as an escape (`\\x1b`, `\\u202e`,
`\\xff` for the byte behind a surrogate); in JSON it is written as a `\\uXXXX` escape,
so the JSON still decodes to exactly the stored text.
"""

from __future__ import annotations

import json
import re
from typing import Any

# C0 and C1 controls and DEL; bidirectional marks, embeddings, overrides and isolates;
# line and paragraph separators; lone surrogates.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
# The same, minus C0 controls: inside JSON strings json.dumps already escapes those.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def terminal_text(text: str) -> str:
    """`text` with every character that could drive or confuse a terminal made visible."""
    return _UNSAFE.sub(_visible_escape, str(text))


def _visible_escape(match: re.Match[str]) -> str:
    character = match.group()
    code = ord(character)
    if character in _NAMED:
        return _NAMED[character]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def json_text(value: Any, indent: int | None = None, allow_nan: bool = True) -> str:
    """`value` as JSON that any terminal shows faithfully and any UTF-8 encoder accepts:
    non-ASCII text as itself, except the characters above, which become \\uXXXX escapes."""
    separators = None if indent is not None else (",", ":")
    dumped = json.dumps(
        value, indent=indent, ensure_ascii=False, separators=separators, allow_nan=allow_nan
    )
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", dumped)
