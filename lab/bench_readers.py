"""What a write costs the long-lived readers of a big folder index (`lab bench --only
readers`).

An index of `--store-size` synthetic passages is built as `bench_publish.build` builds
one (the rows go in as SQL, each space is written whole as generation 1's flat base of
random unit vectors), under the manifest of the `hashed-words` test encoder, so that a
`serve` encodes its queries without torch (256-d vectors). Then `writes` times, a few
passages are written through the `Store` interface, their vectors the encoder's own of
their text, so that a query of that text finds them first, and:

- `serve`: a `ctxsearch serve` on the index answered a few queries before the first write;
  after each commit, `/search?q=TEXT&mode=contextual` is asked until an answer lists
  the new passage: the seconds from the commit's return to that answer, apart for the
  writes that merged the deltas into a new base (every reader loads a new base whole).
  Its resident memory before the first write and after the last.
- `reader`: the new generation is then read by a new store (the whole load every new
  generation cost a reader before readers followed: the base read again, every delta
  with it) and by a store that read the previous one (following: only the new delta
  read), in alternating order: the seconds of each and their ratio.

`serve_code` runs the server from another checkout (its `indexer` and `search`
packages first on the path), e.g. the main branch's, for a figure from before a change.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

POLL_SECONDS = 0.02
ANSWER_TIMEOUT = 300.0
PASSAGES_PER_WRITE = 3
WARM_UP_QUERIES = 8


def reader_rows(
    passages: int, scratch: Path, writes: int = 10, serve_code: Path | None = None
) -> list[dict[str, Any]]:
    """Build the index, start a server on it, write `writes` times: the rows."""
    from indexer.store.backends import open_store
    from lab.bench_publish import build

    folder = scratch / f"readers-{passages}"
    built = build(folder, passages, _hashed_words_manifest(scratch / "readers-seed"))
    server, url = _serve(folder, serve_code)
    writer, follower = open_store(folder), open_store(folder)
    try:
        first = _first_answer(url, "anything at all", None, time.perf_counter())
        for number in range(WARM_UP_QUERIES):  # a long-lived server has answered before
            _first_answer(url, f"warming up {number}", None, time.perf_counter())
        with follower.snapshot():
            pass
        resident_before = _resident_mb(server.pid)
        answers, merges, full, followed = [], [], [], []
        for number in range(writes):
            base = _base_of(writer)
            text, path, committed = _write(writer, number)
            merged = _base_of(writer) != base
            (merges if merged else answers).append(_first_answer(url, text, path, committed))
            for kind in ("full", "follow") if number % 2 == 0 else ("follow", "full"):
                seconds = _read_in_full(folder) if kind == "full" else _follow(follower)
                if not merged:  # (after a merge, following is a full load)
                    (full if kind == "full" else followed).append(seconds)
        resident_after = _resident_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=60)
        writer.close()
        follower.close()
    written = f"{passages:,} passages, {len(answers)} writes of {PASSAGES_PER_WRITE}"
    return [
        {
            "benchmark": f"serve: first query, loading the spaces ({passages:,} passages)",
            "seconds": first,
            "note": f"index built in {built['build_seconds']:.0f} s",
        },
        {
            "benchmark": f"serve: commit to answer, median ({written}, a delta each)",
            "seconds": statistics.median(answers),
            "max_seconds": max(answers),
            "answers_seconds": [round(seconds, 3) for seconds in answers],
            "target": 2.0,
            "meets_target": max(answers) <= 2.0,
            "resident_mb_before": resident_before,
            "resident_mb_after": resident_after,
            "note": f"RSS {resident_before:,.0f} MB before the writes, "
            f"{resident_after:,.0f} MB after",
        },
        {
            "benchmark": f"serve: commit to answer after a write that merged ({len(merges)})",
            "writes": len(merges),
            "seconds": statistics.median(merges) if merges else None,
            "max_seconds": max(merges, default=None),
            "note": "a new base: every reader loads it whole",
        },
        {
            "benchmark": f"reader: new generation, full load vs following ({written})",
            "baseline_seconds": statistics.median(full),
            "seconds": statistics.median(followed),
            "ratio": statistics.median(full) / max(statistics.median(followed), 1e-9),
        },
    ]


def _hashed_words_manifest(seed_folder: Path):
    """The manifest a first run of the `hashed-words` encoder writes (of a one-file
    folder): its model, fingerprint and static settings, which a server checks; flat,
    as the base is built (`auto` would have the first write rebuild it as a graph)."""
    from indexer import Indexer
    from indexer.store.backends import open_store

    documents = seed_folder / "documents"
    documents.mkdir(parents=True, exist_ok=True)
    (documents / "seed.txt").write_text("A seed document for the manifest.\n")
    Indexer(seed_folder / "index", model="hashed-words").index_folder(documents)
    store = open_store(seed_folder / "index")
    try:
        return dataclasses.replace(store.manifest, index_type="flat", quantize="none")
    finally:
        store.close()


def _serve(folder: Path, code: Path | None) -> tuple[subprocess.Popen, str]:
    """A `ctxsearch serve` process on `folder` (the code of checkout `code`, if given),
    and its address once it answers."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if code is not None:
        environment["PYTHONPATH"] = str(code.resolve())
    command = ["serve", "--index", str(folder), "--port", str(port)]
    server = subprocess.Popen(
        [sys.executable, "-c", "from search.cli import main; main()", *command],
        env=environment,
        cwd=folder,  # `-c` puts the working folder first on the path: no code there
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + ANSWER_TIMEOUT
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/health", timeout=5).read()
            return server, url
        except OSError:
            if server.poll() is not None:
                raise RuntimeError("the server stopped before it answered") from None
            time.sleep(0.2)
    server.terminate()
    raise RuntimeError("the server did not answer in time")


def _write(store, number: int) -> tuple[str, str, float]:
    """Add a document of a few passages; its first passage's text, its path, and when
    the commit returned."""
    from indexer.encoders.hashed import HashedWordsEncoder
    from indexer.reading.sources import Document
    from indexer.splitting.chunking import Chunk
    from indexer.store.base import NewDocument

    texts = [f"written{number} passage{i} beacon{number}x{i}" for i in range(PASSAGES_PER_WRITE)]
    path = f"/bench/written-{number:04d}.txt"
    chunks = [Chunk(i, 0, len(text), text) for i, text in enumerate(texts)]
    vectors = {space: HashedWordsEncoder(space).encode(texts) for space in ("contextual", "static")}
    sha256 = f"{number:032x}".rjust(64, "f")  # not a copy of any other file
    document = Document(path=Path(path), text=" ".join(texts), size=1, mtime_ns=1, sha256=sha256)
    with store.writer(), store.change() as change:
        change.add_documents([NewDocument(document, chunks, vectors)])
    return texts[0], path, time.perf_counter()


def _base_of(store) -> int:
    """The generation of the contextual space's base that the index publishes now."""
    from indexer.store.local.segments import Segments

    return Segments.of(store.read_manifest(), "contextual").base


def _first_answer(url: str, text: str, path: str | None, since: float) -> float:
    """Seconds from `since` to the first contextual answer to `text` that lists `path`
    (None: any answer)."""
    query = urllib.parse.urlencode({"q": text, "mode": "contextual", "k": 5})
    deadline = time.monotonic() + ANSWER_TIMEOUT
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{url}/search?{query}", timeout=ANSWER_TIMEOUT) as answer:
            hits = json.loads(answer.read())["results"]
        if path is None or any(hit["path"] == path for hit in hits):
            return time.perf_counter() - since
        time.sleep(POLL_SECONDS)
    raise RuntimeError(f"no answer listed {path} within {ANSWER_TIMEOUT:.0f} s")


def _read_in_full(folder: Path) -> float:
    """Seconds a new store takes to load every space of the newest generation."""
    from indexer.store.backends import open_store

    started = time.perf_counter()
    store = open_store(folder)
    try:
        with store.snapshot():
            return time.perf_counter() - started
    finally:
        store.close()


def _follow(store) -> float:
    """Seconds a store that read the previous generation takes to read the newest."""
    started = time.perf_counter()
    with store.snapshot():
        return time.perf_counter() - started


def _resident_mb(pid: int) -> float:
    """A process's resident memory (VmRSS), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0
