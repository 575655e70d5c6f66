"""What a contextual fill's many small publishes cost a folder index's vector files.

A run publishes its passages first and then fills the contextual space in batches of
`--fill-batch-chunks` passages, each its own publish. This makes a new index
folder and publishes BATCHES changes of 256 new passages (random unit vectors, 384-d,
in both spaces), as a fill of that many batches does, importing the code of a checkout
(`--code`), so one script measures two versions:

    python lab/bench_fill_publishes.py --batches 250 --code /work/old
    python lab/bench_fill_publishes.py --batches 250 --code .

It prints the seconds the publishes took (the SQL rows included), how many bases of the
contextual space were written, the bytes of contextual space files written (every base
and delta file that appeared, counted once), and the segments left at the end.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DIM = 384
BATCH = 256


def main() -> None:
    """Parse the arguments, publish the batches, print one line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=250)
    parser.add_argument("--code", type=Path, default=Path("."), help="the checkout to import")
    arguments = parser.parse_args()
    sys.path.insert(0, str(arguments.code.resolve()))
    print(publish(arguments.batches))


def publish(batches: int) -> str:
    """Publish `batches` changes of `BATCH` new passages into a new index; the figures."""
    from indexer.store.backends import open_store
    from indexer.store.manifest import Manifest

    folder = Path(tempfile.mkdtemp(prefix="fill-publishes-")) / "ix"
    store = open_store(folder, create=True)
    manifest = Manifest(
        model="bench", model_fingerprint="bench", pooling="mean", dim=DIM,
        max_tokens=16, chunk_tokens=14, chunk_overlap=2, version="bench",
    )  # fmt: skip
    with store.writer():
        store.initialise(manifest)
    rng = np.random.default_rng(0)
    seen: set[str] = set()
    written = bases = 0
    start = time.perf_counter()
    for number in range(batches):
        with store.writer(), store.change() as change:
            change.add_documents([_document(number, rng)])
        for path in folder.glob("contextual-*"):
            if path.name not in seen:
                seen.add(path.name)
                written += path.stat().st_size
                bases += path.suffix == ".faiss"
    seconds = time.perf_counter() - start
    segments = store.read_manifest().segments["contextual"]
    store.close()
    return (
        f"batches {batches} passages {batches * BATCH} seconds {seconds:.1f} "
        f"contextual bases written {bases} bytes written {written / 1e6:.0f} MB "
        f"deltas left {len(segments['deltas'])}"
    )


def _document(number: int, rng: np.random.Generator):
    from indexer.reading.sources import Document
    from indexer.splitting.chunking import Chunk
    from indexer.store.base import NewDocument

    texts = [f"passage {number} {i}" for i in range(BATCH)]
    vectors = rng.standard_normal((BATCH, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    source = Document(
        path=Path(f"/fill/{number}.txt"), text=" ".join(texts), size=1, mtime_ns=1,
        sha256="0" * 64,
    )  # fmt: skip
    chunks = [Chunk(i, 0, len(text), text) for i, text in enumerate(texts)]
    return NewDocument(source, chunks, {"contextual": vectors, "static": vectors})


if __name__ == "__main__":
    main()
