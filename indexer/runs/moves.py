"""When a new file is a gone document moved or renamed, and may keep its chunks.

The same bytes are not enough: `page.html` renamed `page.txt` is read by another reader
(the plain-text one keeps the script and comments the HTML one drops), and `notes.txt`
renamed `notes.md` has headings now. A file is a move only when its bytes, its reader
and the kind of text its name says (which decides its chunks' headings and lines) are
all those of the gone document; otherwise it is read and encoded as a new file, as a
fresh index would.
"""

from __future__ import annotations

from pathlib import Path

from indexer.reading.readers import LAYOUT_READERS, READERS
from indexer.reading.text_layout import text_kind

MoveKey = tuple[str, str, str]


def move_key(sha256: str, path: Path | str) -> MoveKey:
    """What a gone document and a new file must share for the file to be a move of it."""
    suffix = Path(path).suffix.lower()
    reader = LAYOUT_READERS.get(suffix) or READERS.get(suffix)
    name = f"{reader.__module__}.{reader.__qualname__}" if reader is not None else suffix
    return sha256, name, text_kind(str(path))
