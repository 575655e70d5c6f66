"""Helpers for crash and concurrency tests: a generated corpus, an indexer process, state."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

from indexer import Indexer
from indexer.store.base import Target
from search import Searcher
from tests.conftest import ROOT

WORDS = (  # noqa: SIM905 (a paragraph is easier to read than forty quoted words)
    "river bank money loan crane tower bird python snake code java coffee island spring "
    "season coil water mouse cursor field bat cave cricket pitch roof music rock stone "
    "apple orchard phone jaguar car cat engine seal harbor jar trunk elephant luggage"
).split()
QUERIES = ["river bank erosion", "coffee from java", "tower crane", "apple orchard in spring"]
BATCH_CHUNKS = 8  # chunks encoded together, and contextual vectors the fill publishes together

# SIGINT's default handler first: a shell's background job (a CI runner's, `nohup ... &`)
# starts with SIGINT ignored, and the Ctrl-C the tests send must be a Ctrl-C.
_RUN_INDEXER = """
import signal
import sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from indexer import Indexer
from indexer.store.base import Target
batch = int(sys.argv[4])
Indexer(sys.argv[1], model=sys.argv[3], batch_chunks=batch, fill_batch_chunks=batch).index_folder(
    sys.argv[2]
)
"""


def write_corpus(folder: Path, seed: int = 0, files: int = 30) -> Path:
    """Deterministic documents of varied length (several chunks for the longer ones)."""
    generator = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(files):
        paragraphs = [
            " ".join(generator.choice(WORDS) for _ in range(generator.randint(20, 60))) + "."
            for _ in range(generator.randint(1, 6))
        ]
        (folder / f"doc-{number:03d}.txt").write_text("\n\n".join(paragraphs))
    return folder


def mutate_corpus(folder: Path) -> None:
    """Change five files, delete five, add five."""
    for number in range(5):
        path = folder / f"doc-{number:03d}.txt"
        path.write_text(path.read_text() + "\n\nAn added closing remark about harbor seals.")
    for number in range(5, 10):
        (folder / f"doc-{number:03d}.txt").unlink()
    write_corpus(folder / "new", seed=99, files=5)


def _indexer_command(index_dir: Target, folder: Path, model_dir: Path) -> list[str]:
    return [sys.executable, "-c", _RUN_INDEXER, str(index_dir), str(folder), str(model_dir),
            str(BATCH_CHUNKS)]  # fmt: skip


def run_indexer_process(
    index_dir: Target,
    folder: Path,
    model_dir: Path,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """Index in a separate process (so that it can be killed), returning how it ended."""
    return subprocess.run(
        _indexer_command(index_dir, folder, model_dir),
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_indexer_process(
    index_dir: Target, folder: Path, model_dir: Path, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """Start indexing in a separate process and return at once."""
    return subprocess.Popen(
        _indexer_command(index_dir, folder, model_dir),
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def index_in_process(index_dir: Target, folder: Path, model_dir: Path, quantize: str | None = None):
    """Index in this process (the model stays loaded between calls)."""
    indexer = Indexer(
        index_dir,
        model=str(model_dir),
        batch_chunks=BATCH_CHUNKS,
        fill_batch_chunks=BATCH_CHUNKS,
        quantize=quantize,
    )
    return indexer.index_folder(folder)


def state(index_dir: Target) -> dict:
    """What a user can observe of an index: its documents, chunk count and search results."""
    from tests.support.oracle import index_fingerprint

    # Every document (`documents_under("/")` would leave out those of recorded roots).
    documents = sorted(
        (doc.path, doc.sha256) for doc in index_fingerprint(index_dir).documents.values()
    )
    with Searcher(index_dir) as searcher:
        store = searcher.store
        results = {
            (query, mode): [
                (hit.path, hit.start, hit.end, round(hit.score, 4))
                for hit in searcher.search(query, k=5, mode=mode).results
            ]
            for query in QUERIES
            for mode in ("lexical", "static", "contextual", "hybrid")
        }
        return {
            "documents": documents,
            "chunks": store.describe()["chunks"],
            "results": results,
            "completeness": searcher.completeness().to_dict(),
        }


def filling_to(observed: dict, new: dict) -> bool:
    """Whether `observed` is a state the fill of the run to `new` publishes on its way:
    every new document and passage, each found by the lexical and static spaces as in
    `new` (the contextual space holds some of the new passages, not all yet)."""
    return (
        observed["documents"] == new["documents"]
        and observed["chunks"] == new["chunks"]
        and observed["completeness"]["contextual_complete"] is False
        and all(
            found == new["results"][query, mode]
            for (query, mode), found in observed["results"].items()
            if mode in ("lexical", "static")
        )
    )


def copy_index(source: Path, destination: Path) -> Path:
    """A copy of an index directory, to start each crash from the same state."""
    return Path(shutil.copytree(source, destination))


def index_before_and_after_a_change(
    tmp_path: Path, model_dir: Path, index: Target | None = None, reference: Target | None = None
) -> tuple[Path, Target, dict, dict]:
    """An indexed corpus whose folder has since changed, with the search results of both.

    Returns the folder, the index (still at the old state), and the results of the old
    state and of the new one (from a reference index brought up to date). Both indexes
    default to folders; give database URLs to run the same on PostgreSQL.
    """
    folder = write_corpus(tmp_path / "docs")
    index_dir = index or tmp_path / "ix"
    reference = reference or tmp_path / "reference"
    index_in_process(index_dir, folder, model_dir)
    index_in_process(reference, folder, model_dir)
    old = state(index_dir)["results"]
    mutate_corpus(folder)
    index_in_process(reference, folder, model_dir)
    return folder, index_dir, old, state(reference)["results"]


def wait_for_pause(process: subprocess.Popen, point: str) -> None:
    """Read the process's stderr until it says it waits at `point` (CTXSEARCH_PAUSE_AT)."""
    _wait_for_line(process, f"paused at {point}")


def wait_for_hold(process: subprocess.Popen, point: str) -> None:
    """Read the process's stderr until it says it is held at `point` (CTXSEARCH_HOLD_AT)."""
    _wait_for_line(process, f"held at {point}")


def _wait_for_line(process: subprocess.Popen, said: str) -> None:
    assert process.stderr is not None
    for line in process.stderr:
        if said in (line.decode() if isinstance(line, bytes) else line):
            return
    raise AssertionError(f"the process ended before it said {said!r}")
