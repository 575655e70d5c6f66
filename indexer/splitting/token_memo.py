"""What a tokenizer made of a large document's texts, kept on disk for the next process.

A new process (`ctxsearch index` after an edit, a `watch` just started) splits a large
file cold: a 1.4M-character page takes its tokenizer about 6,000 calls, seconds of CPU,
where the writer that split it last had it all in its split cache. The token spans of a
text depend only on the text and the tokenizer, never on how splitting uses them, so
they can be kept: a memo file per document and tokenizer holds the token spans of each
section text and the token count of each other text its last split looked at, keyed by
the texts' digests. The next process reads it before splitting the document, and
tokenises only the texts an edit changed.

A memo is only a cache: it is written whole and renamed into place (a crash leaves the
old one or none), a file that cannot be read or is of another tokenizer is passed over,
and one that cannot be written only means tokenising again next time. The folder of
memos is kept within `MEMO_BUDGET_BYTES`: after a memo is written, the least recently
used ones (a read marks a memo used) are deleted until the rest fit, so that the memos
of files long renamed, deleted or no longer indexed do not pile up.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Bumped if what a memo file holds changes shape; other files are passed over.
MEMO_FORMAT = 1
_DIGEST_BYTES = 16
# What the memos of all documents may take on disk (a 1.4M-character page's: 2.4 MB).
MEMO_BUDGET_BYTES = 256 * 2**20


def digest(text: str) -> bytes:
    """The key of `text` in a memo."""
    return hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=_DIGEST_BYTES
    ).digest()


@dataclass(frozen=True)
class TokenMemo:
    """The memo file of one document (a path, or a record's id) for one tokenizer."""

    path: Path
    tokenizer: str

    @classmethod
    def of(cls, folder: Path, tokenizer: str, document: str) -> TokenMemo:
        """The memo of `document` for `tokenizer`, kept in `folder`."""
        return cls(Path(folder) / f"{tokenizer}-{digest(document).hex()}.npz", tokenizer)

    def read(self) -> tuple[dict[bytes, np.ndarray], dict[bytes, int]]:
        """The section spans and the token counts it holds, by digest; nothing if the file
        is missing, unreadable, of another format or of another tokenizer."""
        try:
            with np.load(self.path, allow_pickle=False) as stored:
                if int(stored["format"]) != MEMO_FORMAT or str(stored["tokenizer"]) != (
                    self.tokenizer
                ):
                    return {}, {}
                keys, offsets, spans = stored["section_keys"], stored["offsets"], stored["spans"]
                count_keys, counts = stored["count_keys"], stored["counts"]
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
            return {}, {}
        if len(offsets) != len(keys) + 1 or len(count_keys) != len(counts):
            return {}, {}
        with contextlib.suppress(OSError):  # used now: the last to go when the folder is full
            os.utime(self.path)
        spans = spans.astype(np.int64).reshape(-1, 2)
        sections = {
            bytes(key): spans[offsets[row] : offsets[row + 1]] for row, key in enumerate(keys)
        }
        return sections, {
            bytes(key): int(count) for key, count in zip(count_keys, counts, strict=True)
        }

    def write(self, sections: dict[bytes, np.ndarray], counts: dict[bytes, int]) -> None:
        """Write the memo whole, then rename it into place; never raises for the disk."""
        arrays = list(sections.values())
        lengths = np.array([len(spans) for spans in arrays], dtype=np.int64)
        offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths)])
        spans = np.concatenate(arrays).astype(np.int32) if arrays else np.zeros((0, 2), np.int32)
        path = self.path
        temporary = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(temporary, "wb") as handle:
                np.savez(
                    handle,
                    format=np.array(MEMO_FORMAT),
                    tokenizer=np.array(self.tokenizer),
                    section_keys=_keys(list(sections)),
                    offsets=offsets,
                    spans=spans,
                    count_keys=_keys(list(counts)),
                    counts=np.array(list(counts.values()), dtype=np.int32),
                )
            os.replace(temporary, path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()
            return
        _keep_within_budget(path.parent, MEMO_BUDGET_BYTES)


def _keep_within_budget(folder: Path, budget: int) -> None:
    """Delete the least recently used memos of `folder` until the rest take at most
    `budget` bytes (another process may be deleting too: what is gone is passed over)."""
    memos = []
    for entry in folder.glob("*.npz"):
        with contextlib.suppress(OSError):
            status = entry.stat()
            memos.append((status.st_mtime_ns, status.st_size, entry))
    total = sum(size for _used, size, _entry in memos)
    for _used, size, entry in sorted(memos):
        if total <= budget:
            return
        with contextlib.suppress(OSError):
            entry.unlink()
        total -= size


def _keys(digests: list[bytes]) -> np.ndarray:
    joined = np.frombuffer(b"".join(digests), dtype=np.uint8)
    return joined.reshape(len(digests), _DIGEST_BYTES)
