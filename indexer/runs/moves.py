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

from indexer.reading.formats import file_format

MoveKey = tuple[str, str, str]


def move_key(sha256: str, path: Path | str) -> MoveKey:
    """What a gone document and a new file must share for the file to be a move of it."""
    found = file_format(path)
    if found is None:
        return sha256, Path(path).suffix.lower(), "text"
    return sha256, found.reader_name, found.text_kind
