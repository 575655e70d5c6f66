"""How many passages an edit changes, and how long passages are, as the index splits
files (`indexer.splitting.chunking`: passages anchored to structure). The windows from
the file's start that came before them gave 1, 3 and 1 new passages for the three edits
of Python's changelog, against 1, 1 and 1 (issue 26; `git show dac9394^` has them).

For each file, three edits are made to its bytes (append a line, prepend a section,
change a sentence in the middle), the file is read again by ctxsearch's own reader, and
the passages whose text is new (in no passage of the unedited file, so a content-keyed
store would encode them) are counted.

    python -m lab.passage_locality FILE... [--overlap 32] [--random N] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from indexer.reading.sources import Document, SourceFile, read_document
from indexer.splitting.chunking import chunk_document
from indexer.splitting.structure import section_kind

Edit = Callable[[bytes, str], bytes]


def append_line(data: bytes, kind: str) -> bytes:
    """One line at the end of the file (inside the body of an HTML page)."""
    if kind == "html" and b"</body>" in data:
        at = data.rindex(b"</body>")
        return data[:at] + b"<p>One more line, appended at the end.</p>\n" + data[at:]
    return data.rstrip(b"\n") + b"\n\nOne more line, appended at the end.\n"


def prepend_section(data: bytes, kind: str) -> bytes:
    """A new section (heading and a paragraph) before the document's first section."""
    body = b"Added before everything else: a short paragraph about a new release."
    if kind == "html" and b"</h1>" in data:
        at = data.index(b"</h1>") + len(b"</h1>")
        new = b"\n<section><h2>A new section</h2>\n<p>" + body + b"</p>\n</section>\n"
        return data[:at] + new + data[at:]
    if kind == "markdown":
        heading = re.search(rb"^#{1,6} .*\n", data, re.MULTILINE)
        at = heading.end() if heading else 0
        return data[:at] + b"\n## A new section\n\n" + body + b"\n\n" + data[at:]
    if kind == "rst":
        return b"A new section\n=============\n\n" + body + b"\n\n" + data
    return body + b"\n\n" + data


def change_sentence(data: bytes, kind: str) -> bytes:
    """A few words added to a sentence of text near the middle of the file."""
    return add_words(data, kind, len(data) // 2, b" (changed in the middle)")


def add_words(data: bytes, kind: str, after: int, words: bytes) -> bytes:
    """`words` added after the first space between two words of text from byte `after` on
    (from the start if there is none after it); outside tags in an HTML page."""
    pattern = re.compile(
        rb">[^<>]*?[a-z]{3,}( )[a-z]{3,}[^<>]*<" if kind == "html" else rb"[a-z]{3,}( )[a-z]{3,}"
    )
    match = pattern.search(data, after) or pattern.search(data)
    if match is None:
        raise ValueError("no two words of text to add words between")
    at = match.start(1)
    return data[:at] + words + data[at:]


EDITS: dict[str, Edit] = {
    "append a line": append_line,
    "prepend a section": prepend_section,
    "change a sentence in the middle": change_sentence,
}


def read_bytes(data: bytes, name: str) -> Document:
    """`data` read by ctxsearch's reader for a file called `name`."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        status = path.stat()
        return read_document(SourceFile(path, status.st_size, status.st_mtime_ns))


def split(document: Document, name: str, loaded, overlap: int) -> list[str]:
    """The texts of the chunks the index makes of `document`, read from a file `name`."""
    budget = loaded.max_tokens - loaded.tokenizer.num_special_tokens_to_add()
    chunks = chunk_document(
        document.text, name, document.layout, loaded.token_spans, budget, overlap
    )
    return [chunk.text for chunk in chunks]


def lengths(texts: list[str], loaded) -> dict[str, float]:
    tokens = [len(loaded.token_spans(text)) for text in texts]
    deciles = statistics.quantiles(tokens, n=10) if len(tokens) > 1 else tokens * 9
    return {
        "passages": len(tokens),
        "mean": round(statistics.fmean(tokens), 1),
        "p10": deciles[0],
        "p50": deciles[4],
        "p90": deciles[8],
        "max": max(tokens),
    }


def measure(path: Path, loaded, overlap: int, random_edits: int = 0) -> dict:
    """The lengths and the passages each edit makes new, for one file; with
    `random_edits`, also for that many words added at random places (seeded)."""
    data, name = path.read_bytes(), path.name
    kind = section_kind(name)
    document = read_bytes(data, name)
    started = time.perf_counter()
    original = split(document, name, loaded, overlap)
    known = set(original)
    report = {
        "file": str(path),
        "characters": len(document.text),
        "seconds to split": round(time.perf_counter() - started, 2),
        "lengths": lengths(original, loaded),
        "new passages per edit": {},
    }
    for edit_name, edit in EDITS.items():
        edited = split(read_bytes(edit(data, kind), name), name, loaded, overlap)
        report["new passages per edit"][edit_name] = sum(1 for t in edited if t not in known)
    rng = random.Random(26)
    counts: list[int] = []
    for _ in range(random_edits):
        changed = add_words(data, kind, rng.randrange(len(data)), b" and a few words")
        edited = split(read_bytes(changed, name), name, loaded, overlap)
        counts.append(sum(1 for text in edited if text not in known))
    if random_edits:
        report["new passages per random edit"] = {
            "mean": round(statistics.fmean(counts), 2),
            "max": max(counts),
            "over 5": sum(n > 5 for n in counts),
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--overlap", type=int, default=32)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--random", type=int, default=0, help="this many random edits too")
    arguments = parser.parse_args()
    from indexer.encoders.loading import load_model

    loaded = load_model()
    for path in arguments.files:
        report = measure(path, loaded, arguments.overlap, arguments.random)
        if arguments.json:
            print(json.dumps(report))
            continue
        print(f"{report['file']}: {report['characters']:,} characters")
        print(f"  lengths {report['lengths']}")
        for edit_name, count in report["new passages per edit"].items():
            print(f"  {edit_name:32} new passages: {count}")
        if "new passages per random edit" in report:
            print(f"  random edits, new passages {report['new passages per random edit']}")


if __name__ == "__main__":
    main()
