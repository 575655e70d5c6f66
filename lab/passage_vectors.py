"""A million real passages as static vectors, for benchmarks that must not use synthetic
clusters (`ctxsearch lab bench --quantize`).

The passages are the sentences of text on this machine (the Python documentation's HTML
pages, the SciFact and LISA corpora), and sliding windows of 2 to 8 of them, duplicates
dropped, until there are `count`. Each passage's vector is the static space's: the mean of
the model's input token-embedding rows of its tokens (`StaticEncoder`), made unit length.

    python -m lab.passage_vectors OUT.npy [--count 1000000]
"""

from __future__ import annotations

import argparse
import html
import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

DOC_ROOTS = tuple(Path("/usr/share/doc").glob("python3*/html"))
CORPORA = tuple(Path(f"/work/shared/eval/{name}/corpus.jsonl") for name in ("scifact", "lisa"))
WINDOWS = (1, 2, 3, 4, 5, 6, 7, 8)
_TAG = re.compile(r"<script.*?</script>|<style.*?</style>|<[^>]+>", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+")
_SPACE = re.compile(r"\s+")


def documents() -> Iterator[str]:
    """The plain text of each HTML page under `DOC_ROOTS`, then each corpus record."""
    for root in DOC_ROOTS:
        for page in sorted(root.rglob("*.html")):
            yield html.unescape(_TAG.sub(" ", page.read_text(errors="replace")))
    for corpus in CORPORA:
        if corpus.exists():
            for line in corpus.read_text().splitlines():
                record = json.loads(line)
                yield f"{record.get('title', '')}. {record.get('text', '')}"


def passages(count: int) -> list[str]:
    """Up to `count` distinct passages: every sentence of 4+ words, then windows of 2 to 8."""
    sentences_by_document = []
    for text in documents():
        pieces = (_SPACE.sub(" ", piece).strip() for piece in _SENTENCE_END.split(text))
        sentences_by_document.append([piece for piece in pieces if len(piece.split()) >= 4])
    seen: dict[str, None] = {}
    for window in WINDOWS:
        for sentences in sentences_by_document:
            for start in range(0, max(0, len(sentences) - window + 1)):
                seen.setdefault(" ".join(sentences[start : start + window])[:1000])
                if len(seen) >= count:
                    return list(seen)
    return list(seen)


def static_vectors(texts: list[str], batch: int = 4096) -> np.ndarray:
    """The unit static vector (mean of token-embedding rows) of each text."""
    from indexer.encoders.loading import load_model
    from indexer.encoders.static import StaticEncoder

    encoder = StaticEncoder(load_model())
    out = np.empty((len(texts), encoder.dim), dtype=np.float32)
    for start in range(0, len(texts), batch):
        rows = encoder._encode_batch(texts[start : start + batch])
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        out[start : start + batch] = rows / np.maximum(norms, 1e-12)
    return out


def main() -> None:
    """Write the vectors to OUT (float32 .npy) and the passages beside it (.txt)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=1_000_000)
    arguments = parser.parse_args()
    texts = passages(arguments.count)
    print(f"{len(texts)} passages", flush=True)
    arguments.out.with_suffix(".txt").write_text("\n".join(t.replace("\n", " ") for t in texts))
    np.save(arguments.out, static_vectors(texts))
    print(f"wrote {arguments.out}", flush=True)


if __name__ == "__main__":
    main()
