"""What publishing a one-file edit costs against the size of a folder index.

An index folder of N synthetic passages (random unit vectors, 384-d, in both spaces;
files of `PASSAGES_PER_FILE` passages; `index_type` flat, so that building the largest
one takes minutes rather than hours) is made once (`build`: the store makes the index,
the rows and the FAISS files go in directly, in the layout every version reads). Then
one file is edited through the `Store` interface as a run edits it once its scan found
the file changed: its passages removed, ten new ones added, in one change. Each step
runs in its own process, so that its peak memory is its own, importing the code of a
checkout (`--before`, `--after`), so one script measures both:

    python lab/bench_publish.py --sizes 10000,100000,1000000 \\
        --work /tmp/publish --before /work/main --after .

Per size and code it prints the edit's seconds (from taking the writer lock to the
commit, the loading of the spaces a run does included; imports are not), the bytes of
space files it wrote, its peak memory, how long a new reader then takes to load the
spaces, and the disk the spaces take. The first edit of the after code on an index made
before segments merges once (the structure of its base is not recorded): its own row.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DIM = 384
PASSAGES_PER_FILE = 10
EDITED_PASSAGES = 10


def _manifest():
    from indexer.store.manifest import Manifest

    return Manifest(
        model="synthetic",
        model_fingerprint="synthetic",
        pooling="mean",
        dim=DIM,
        max_tokens=256,
        chunk_tokens=200,
        chunk_overlap=20,
        version="bench",
        index_type="flat",
    )


def _unit_vectors(count: int, seed: int, dim: int = DIM) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def _file(number: int, passages: int, seed: int):
    from indexer.reading.sources import Document
    from indexer.splitting.chunking import Chunk
    from indexer.store.base import NewDocument

    texts = [f"file {number} passage {i} version {seed}" for i in range(passages)]
    chunks = [Chunk(i, 0, len(text), text) for i, text in enumerate(texts)]
    vectors = _unit_vectors(passages, seed * 1_000_003 + number)
    document = Document(
        path=Path(f"/bench/{number:07d}.txt"),
        text=" ".join(texts),
        size=1,
        mtime_ns=1,
        sha256="0" * 64,
    )
    return NewDocument(document, chunks, {"contextual": vectors, "static": vectors})


def build(folder: Path, passages: int, manifest=None) -> dict:
    """Make an index of `passages` synthetic passages as one first run would leave it:
    the store makes the index (with `manifest`, default the synthetic 384-d one), then
    the rows go in as plain SQL on its database (its full-text triggers included) and
    each space is written as generation 1's base file (flat). Through `change()` the
    million would take the best part of an hour."""
    import faiss
    from sqlalchemy import text

    from indexer.store.backends import open_store
    from indexer.store.local.database import sqlite_engine

    started = time.perf_counter()
    store = open_store(folder, create=True)
    with store.writer():
        store.initialise(manifest or _manifest())
    dim = store.manifest.dim
    store.close()
    files = passages // PASSAGES_PER_FILE
    engine = sqlite_engine(folder / "ctxsearch.sqlite")
    with engine.begin() as database:
        database.execute(
            text(
                "INSERT INTO documents (id, host, path, size, mtime_ns, sha256, indexed_at) "
                "VALUES (:id, '', :path, 1, 1, :sha, 0)"
            ),
            # each file's own hash: files of one hash are copies, shown as one hit
            [
                {"id": n + 1, "path": f"/bench/{n:07d}.txt", "sha": f"{n:064x}"}
                for n in range(files)
            ],
        )
        database.execute(
            text(
                'INSERT INTO chunks (id, document_id, ordinal, start, "end", text) '
                "VALUES (:id, :document, :ordinal, 0, 20, :text)"
            ),
            [
                {
                    "id": n * PASSAGES_PER_FILE + i + 1,
                    "document": n + 1,
                    "ordinal": i,
                    "text": f"file {n} passage {i} version 0",
                }
                for n in range(files)
                for i in range(PASSAGES_PER_FILE)
            ],
        )
        database.execute(text("UPDATE manifest SET value = '1' WHERE key = 'generation'"))
        segments = {
            space: {"base": 1, "deltas": [], "delta_bytes": 0, "tombstones": 0, "structure": "flat"}
            for space in ("contextual", "static")
        }
        database.execute(
            text("UPDATE manifest SET value = :segments WHERE key = 'segments'"),
            {"segments": json.dumps(segments)},
        )
    engine.dispose()
    for seed, space in enumerate(("contextual", "static")):
        index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        for first in range(0, passages, 100_000):
            count = min(100_000, passages - first)
            ids = np.arange(first + 1, first + count + 1, dtype=np.int64)
            index.add_with_ids(_unit_vectors(count, seed * 7919 + first, dim), ids)
        faiss.write_index(index, str(folder / f"{space}-000001.faiss"))
        del index
    for stale in folder.glob("*-000000.*"):
        stale.unlink()
    return {"build_seconds": time.perf_counter() - started}


def edit(folder: Path, seed: int) -> dict:
    """Edit one file (a different one each time): its passages out, new ones in."""
    import faiss  # noqa: F401 (imported before the clock starts: not a cost of publishing)

    import indexer.store.local.writing  # noqa: F401
    from indexer.store.backends import open_store

    number = seed % 1_000
    store = open_store(folder)
    # as the run's scan found it (a scan's cost, not the publish's)
    document_id = store.documents_under(Path("/bench"))[f"/bench/{number:07d}.txt"].id
    before = _space_files(folder)
    started = time.perf_counter()
    with store.writer(), store.change() as change:
        change.remove_documents([document_id])
        change.add_documents([_file(number, EDITED_PASSAGES, seed)])
    seconds = time.perf_counter() - started
    store.close()
    after = _space_files(folder)
    written = sum(size for name, size in after.items() if name not in before)
    return {
        "edit_seconds": seconds,
        "bytes_written": written,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def read(folder: Path) -> dict:
    """Open the index and load its spaces, as a new reader does."""
    import faiss  # noqa: F401 (imported before the clock starts)

    from indexer.store.backends import open_store

    started = time.perf_counter()
    store = open_store(folder)
    with store.snapshot() as snapshot:
        sizes = {name: snapshot.space_size(name) for name in snapshot.manifest.spaces}
    seconds = time.perf_counter() - started
    store.close()
    return {
        "reader_load_seconds": seconds,
        "vectors": sizes["contextual"],
        "space_files_mb": sum(_space_files(folder).values()) / 2**20,
        "reader_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _space_files(folder: Path) -> dict[str, int]:
    return {
        path.name: path.stat().st_size
        for path in folder.iterdir()
        if path.suffix in (".faiss", ".npz")
    }


def _step(code: Path, *arguments: str) -> dict:
    """Run one step in a new process importing the code of `code`."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--code", str(code.resolve()), *arguments],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"step {arguments} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(sizes: list[int], work: Path, before: Path, after: Path, edits: int) -> list[dict]:
    """Build an index per size with the before code, then edit it with each code."""
    rows = []
    for passages in sizes:
        folder = work / f"ix-{passages}"
        shutil.rmtree(folder, ignore_errors=True)
        built = _step(before, "build", str(folder), str(passages))
        print(f"# {passages} passages built in {built['build_seconds']:.1f} s", flush=True)
        seed = 1
        for label, code in (("before", before), ("after", after)):
            runs = []
            for attempt in range(edits + (1 if label == "after" else 0)):
                measured = _step(code, "edit", str(folder), str(seed))
                seed += 1
                if label == "after" and attempt == 0:
                    rows.append({"passages": passages, "code": "after, first edit", **measured,
                                 **_step(code, "read", str(folder))})  # fmt: skip
                    continue
                runs.append(measured)
            row = {
                "passages": passages,
                "code": label,
                "edit_seconds": statistics.median(r["edit_seconds"] for r in runs),
                "bytes_written": statistics.median(r["bytes_written"] for r in runs),
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                **_step(code, "read", str(folder)),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| passages | code | edit s | space bytes written | edit peak RSS MB "
        "| reader load s | space files MB |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['passages']:,} | {row['code']} | {row['edit_seconds']:.2f} "
            f"| {int(row['bytes_written']):,} | {row['peak_rss_mb']:.0f} "
            f"| {row['reader_load_seconds']:.2f} | {row['space_files_mb']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step")
    built = steps.add_parser("build")
    built.add_argument("folder", type=Path)
    built.add_argument("passages", type=int)
    edited = steps.add_parser("edit")
    edited.add_argument("folder", type=Path)
    edited.add_argument("seed", type=int)
    loaded = steps.add_parser("read")
    loaded.add_argument("folder", type=Path)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--work", type=Path, default=Path("/tmp/ctxsearch-publish"))
    parser.add_argument("--before", type=Path, default=Path("/work/main"))
    parser.add_argument("--after", type=Path, default=Path("."))
    parser.add_argument("--edits", type=int, default=3)
    parser.add_argument("--code", type=Path, help="import ctxsearch from this checkout")
    arguments = parser.parse_args()
    if arguments.code is not None:
        sys.path.insert(0, str(arguments.code))
    if arguments.step == "build":
        print(json.dumps(build(arguments.folder, arguments.passages)))
    elif arguments.step == "edit":
        print(json.dumps(edit(arguments.folder, arguments.seed)))
    elif arguments.step == "read":
        print(json.dumps(read(arguments.folder)))
    else:
        sizes = [int(size) for size in arguments.sizes.split(",")]
        arguments.work.mkdir(parents=True, exist_ok=True)
        rows = compare(sizes, arguments.work, arguments.before, arguments.after, arguments.edits)
        print(table(rows))


if __name__ == "__main__":
    main()
