"""Round two of reliability: no silent loss of indexed documents, no traceback from any file.

Each test reproduces a defect found by an adversarial pass over 0.1 (issue 12; the item
number is in each docstring) and fails on that version.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer import Indexer
from indexer.errors import (
    IndexClosed,
    IndexLocked,
    IndexNotFound,
    InvalidSettings,
)
from indexer.store.backends import open_store, verify_target
from search import Searcher
from search.cli import cli
from tests.conftest import ROOT, make_pdf
from tests.support.crash_harness import index_in_process, start_indexer_process, wait_for_hold
from tests.support.processes import until_open

DROP_READ_BYPASS = "-dac_override,-dac_read_search"


def as_unprivileged(command: list[str]) -> list[str]:
    """Root reads and writes anything; run `command` without that power."""
    if os.geteuid() != 0:
        return command
    return ["setpriv", f"--bounding-set={DROP_READ_BYPASS}", f"--inh-caps={DROP_READ_BYPASS}",
            *command]  # fmt: skip


def ctxsearch(*args: str) -> subprocess.CompletedProcess:
    command = as_unprivileged([sys.executable, "-m", "search", *map(str, args)])
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def run(*args):
    """`ctxsearch ARGS` in this process."""
    return CliRunner().invoke(cli, [str(arg) for arg in args])


def documents(index: Path) -> list[str]:
    """The paths of every document of the index, under each of its roots."""
    store = open_store(index)
    try:
        roots = store.roots_under(Path("/"))
        return sorted(path for root in roots for path in store.documents_under(Path(root)))
    finally:
        store.close()


# -- silent loss of indexed documents ----------------------------------------------------


def test_folders_whose_names_differ_only_by_case_keep_each_others_documents(tmp_path, fast_model):
    """1. Indexing case/notes removed the documents of case/Notes."""
    for name, files in (("Notes", ["a.md", "b.md"]), ("notes", ["c.md"])):
        for file in files:
            path = tmp_path / "case" / name / file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"A note called {file} about herons and otters.")
    index_in_process(tmp_path / "ix", tmp_path / "case" / "Notes", fast_model)
    summary = index_in_process(tmp_path / "ix", tmp_path / "case" / "notes", fast_model)
    assert summary.removed == 0 and summary.total_documents == 3


def test_an_unreadable_subfolder_is_a_failure_not_a_deletion(tmp_path, notes, fast_model):
    """2. A subfolder that cannot be listed made its documents count as deleted."""
    index_in_process(tmp_path / "ix", notes, fast_model)
    before = documents(tmp_path / "ix")
    os.chmod(notes / "garden", 0o000)
    try:
        result = ctxsearch("index", notes, "--index", tmp_path / "ix", "--json")
    finally:
        os.chmod(notes / "garden", 0o755)
    assert result.returncode == 4, result.stderr
    summary = json.loads(result.stdout)
    assert summary["removed"] == 0 and summary["failed"] == 1
    assert "garden: cannot list the folder (Permission denied)" in result.stderr
    assert documents(tmp_path / "ix") == before


def test_a_root_indexed_on_its_own_is_kept_when_its_parent_is_indexed(tmp_path, fast_model):
    """3. Indexing a parent removed the documents of roots indexed on their own."""
    top = tmp_path / "t"
    own = (top / ".journal" / "day.md", top / "build" / "out.txt", top / "build" / "log.txt")
    for path in (top / "readme.md", *own):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Some words about {path.stem} and kingfishers.")
    (top / ".ctxsearchignore").write_text("build/\n")
    index_in_process(tmp_path / "ix", top / ".journal", fast_model)
    index_in_process(tmp_path / "ix", top / "build", fast_model)
    summary = index_in_process(tmp_path / "ix", top, fast_model)
    assert summary.removed == 0 and summary.total_documents == 4
    (top / "build" / "out.txt").unlink()  # the nested root still follows its own files
    assert index_in_process(tmp_path / "ix", top / "build", fast_model).removed == 1
    assert index_in_process(tmp_path / "ix", top, fast_model).removed == 0


# -- tracebacks and hangs instead of a per-file failure ------------------------------------


def test_a_file_name_that_is_not_utf8_is_indexed_and_shown_safely(tmp_path, notes, fast_model):
    """4. A non-UTF-8 file name aborted the run (and every later run of the folder)."""
    bad = os.fsencode(notes) + b"/bad-\xff\xfe-name.txt"
    with open(bad, "wb") as handle:
        handle.write(b"Puffins nest in burrows on sea cliffs.")
    result = run("index", notes, "--index", tmp_path / "ix", "--model", fast_model)
    assert result.exit_code == 0, result.output
    again = run("index", notes, "--index", tmp_path / "ix", "--json")
    assert json.loads(again.stdout)["unchanged"] == 5
    found = run("query", "puffins", "--index", tmp_path / "ix", "--mode", "lexical")
    assert found.exit_code == 0 and "bad-\\xff\\xfe-name.txt" in found.output
    os.unlink(bad)
    gone = run("index", notes, "--index", tmp_path / "ix", "--json")
    assert json.loads(gone.stdout)["removed"] == 1


def pdf_with_filter(filter_name: str) -> bytes:
    """A PDF whose page content stream claims a filter pypdf cannot decode."""
    return make_pdf(["Filtered text"]).replace(
        b"<< /Length", f"<< /Filter /{filter_name} /Length".encode()
    )


@pytest.mark.parametrize("filter_name", ["Crypt /DecodeParms << /Name /Secret >>", "NoSuchDecode"])
def test_a_pdf_with_an_unsupported_filter_is_one_files_failure(
    tmp_path, notes, fast_model, filter_name
):
    """5. An unsupported PDF stream filter raised NotImplementedError out of the run."""
    (notes / "odd.pdf").write_bytes(pdf_with_filter(filter_name))
    result = run("index", notes, "--index", tmp_path / "ix", "--model", fast_model, "--json")
    assert result.exit_code == 4, result.output
    summary = json.loads(result.stdout)
    assert summary["added"] == 4 and summary["failed"] == 1
    assert "the PDF reader hit" in summary["failures"][0]["reason"]


def test_a_file_replaced_by_a_fifo_after_the_scan_fails_instead_of_blocking(
    tmp_path, notes, fast_model
):
    """6. A FIFO in place of a scanned file blocked the run forever, holding the lock."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    writer = start_indexer_process(
        tmp_path / "ix", notes, fast_model, env={"CTXSEARCH_HOLD_AT": f"after-scan:{gate}"}
    )
    wait_for_hold(writer, "after-scan")  # the scan saw a file, and the run waits
    (notes / "river.txt").unlink()
    os.mkfifo(notes / "river.txt")
    with open(gate, "wb"):  # let the run go on
        pass
    try:
        writer.wait(timeout=120)
    finally:
        writer.kill()
    assert writer.returncode == 0, writer.stderr.read()
    summary = Indexer(tmp_path / "ix").index_folder(notes)  # the FIFO is no file to index
    assert summary.failed == 0 and summary.total_documents == 3


@pytest.mark.parametrize(
    ("merging", "space", "later", "suffix"),
    [
        (False, "static", 1, "delta.npz"),
        (True, "static", 1, "faiss"),
        (False, "contextual", 2, "delta.npz"),
    ],
)
def test_disk_full_while_writing_a_vector_space_is_one_line_and_keeps_the_index(
    tmp_path, notes, fast_model, merging, space, later, suffix
):
    """7. ENOSPC from FAISS's writer came out as a RuntimeError traceback (and from a
    delta segment's writer, or a merged base's). A run's first publish writes the static
    space (a full disk there keeps the index as it was); its fill then writes the
    contextual one (a full disk there keeps the first publish: the next run fills)."""
    index_in_process(tmp_path / "ix", notes, fast_model)
    before = documents(tmp_path / "ix")
    store = open_store(tmp_path / "ix")
    try:
        generation = store.read_manifest().generation
    finally:
        store.close()
    written = f"{space}-{generation + later:06d}.{suffix}"
    (notes / "extra.md").write_text("A note about storm petrels.")
    command = [sys.executable, "-m", "search", "index", str(notes), "--index", str(tmp_path / "ix")]
    merge = {"CTXSEARCH_MAX_DELTAS": "0"} if merging else {}
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    # held at the publish that writes the space (the first one's sweep would take the
    # link away): the held run gets a full disk
    hold = {"CTXSEARCH_HOLD_AT": f"before-space-save:{later}:{gate}"}
    writer = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, **hold, **merge},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_hold(writer, "before-space-save")
    next_file = tmp_path / "ix" / f".{written}.tmp-{writer.pid}"
    next_file.symlink_to("/dev/full")  # the kernel's own "No space left on device"
    with open(gate, "wb"):  # let the run go on
        pass
    _stdout, stderr = writer.communicate(timeout=120)
    assert writer.returncode == 1, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and "No space left on device" in errors[0], stderr
    assert written in errors[0]
    assert "Traceback" not in stderr and not os.path.lexists(next_file)
    published = before if space == "static" else sorted([*before, str(notes / "extra.md")])
    assert documents(tmp_path / "ix") == published
    assert verify_target(tmp_path / "ix").consistent
    Indexer(tmp_path / "ix", model=str(fast_model)).index_folder(notes)  # fills what is left
    assert documents(tmp_path / "ix") == sorted([*before, str(notes / "extra.md")])
    assert verify_target(tmp_path / "ix").consistent


def test_bad_settings_are_refused_before_anything_is_written(tmp_path, notes, tiny_model_dir):
    """8. mean-last99 gave a traceback; a huge overlap wrote a manifest that broke later runs."""
    result = run(
        "index", notes, "--index", tmp_path / "a", "--pooling", "mean-last99", "--model",
        tiny_model_dir,
    )  # fmt: skip
    assert result.exit_code == 2 and "needs 99 layers" in result.stderr, result.output
    assert not (tmp_path / "a").exists()
    with pytest.raises(InvalidSettings, match="overlap must be below"):
        Indexer(tmp_path / "b", model=str(tiny_model_dir), chunk_overlap=10**6).index_folder(notes)
    assert not (tmp_path / "b").exists()
    bad_settings = [
        {"chunk_overlap": -1},
        {"chunk_overlap": 2.5},
        {"batch_chunks": 0},
        {"pooling": "median"},
        {"index_type": "ivf"},
    ]
    for bad in bad_settings:
        with pytest.raises(InvalidSettings):
            Indexer(tmp_path / "c", **bad)
    result = run("index", notes, "--index", tmp_path / "d", "--pooling", "mean-last0")
    assert result.exit_code == 2 and "unknown pooling" in result.stderr


def test_a_locked_database_is_a_typed_error_from_the_library(tmp_path, notes, fast_model):
    """10. Database errors escaped the library untranslated (as SQLAlchemy's classes)."""
    import sqlite3

    index_in_process(tmp_path / "ix", notes, fast_model)
    (notes / "extra.md").write_text("One more note about herons.")
    holder = sqlite3.connect(tmp_path / "ix" / "ctxsearch.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    os.environ["CTXSEARCH_BUSY_TIMEOUT_MS"] = "200"
    try:
        with pytest.raises(IndexLocked, match="locked by another program"):
            Indexer(tmp_path / "ix").index_folder(notes)
    finally:
        del os.environ["CTXSEARCH_BUSY_TIMEOUT_MS"]
        holder.execute("ROLLBACK")
        holder.close()


# -- an index replaced while it is read -----------------------------------------------------


def test_a_reader_follows_an_index_rebuilt_at_the_same_path(tmp_path, notes, fast_model):
    """12. After rm -rf and a new index at the same path, readers mixed old and new."""
    index_in_process(tmp_path / "ix", notes, fast_model)
    other = tmp_path / "other"
    other.mkdir()
    (other / "owls.md").write_text("Barn owls hunt voles at dusk over rough grassland.")
    searcher = Searcher(tmp_path / "ix")
    assert searcher.search("meadow", mode="lexical").results
    old_id = searcher.store.manifest.index_id
    shutil.rmtree(tmp_path / "ix")
    with pytest.raises(IndexNotFound, match="removed"):
        searcher.search("meadow", mode="lexical")
    index_in_process(tmp_path / "ix", other, fast_model)
    assert searcher.search("meadow", mode="lexical").results == []
    [hit] = searcher.search("voles", mode="lexical").results
    assert hit.path.endswith("owls.md")
    assert searcher.document(hit.document_id).path.endswith("owls.md")
    for mode in ("static", "contextual", "hybrid"):
        assert [h.path for h in searcher.search("owls", mode=mode).results] == [hit.path]
    assert searcher.store.describe()["documents"] == 1
    assert searcher.store.manifest.index_id != old_id
    searcher.close()
    with pytest.raises(IndexClosed):
        searcher.search("voles")
    with pytest.raises(IndexClosed):
        searcher.document(hit.document_id)


def test_a_server_follows_an_index_rebuilt_under_it(tmp_path, notes, fast_model):
    """12. Over HTTP: /documents, lexical search and /info answer for the new index."""
    import httpx

    from tests.support.serving import running_server

    index_in_process(tmp_path / "ix", notes, fast_model)
    with running_server(tmp_path / "ix", tmp_path / "server.log") as server:
        assert httpx.get(f"{server.url}/search", params={"q": "meadow", "mode": "lexical"}).json()[
            "results"
        ]
        shutil.rmtree(tmp_path / "ix")
        assert httpx.get(f"{server.url}/info").status_code == 503
        other = tmp_path / "other"
        other.mkdir()
        (other / "owls.md").write_text("Barn owls hunt voles at dusk.")
        index_in_process(tmp_path / "ix", other, fast_model)
        for _ in range(3):
            found = httpx.get(f"{server.url}/search", params={"q": "meadow", "mode": "lexical"})
            assert found.status_code == 200 and found.json()["results"] == []
        [hit] = httpx.get(f"{server.url}/search", params={"q": "voles", "mode": "lexical"}).json()[
            "results"
        ]
        document = httpx.get(f"{server.url}/documents/{hit['document_id']}").json()
        assert document["path"].endswith("owls.md")
        assert httpx.get(f"{server.url}/info").json()["documents"] == 1


# -- also --------------------------------------------------------------------------------


def test_a_read_only_index_can_be_queried_described_and_verified(tmp_path, notes, fast_model):
    """17. query, info and verify failed with "attempt to write a readonly database"."""
    index = tmp_path / "ix"
    index_in_process(index, notes, fast_model)
    files = [path for path in index.iterdir()]
    for path in files:
        os.chmod(path, 0o444)
    os.chmod(index, 0o555)
    try:
        for mode in ("lexical", "static"):
            result = ctxsearch("query", "meadow", "--index", index, "--mode", mode, "--json")
            assert result.returncode == 0, result.stderr
            assert json.loads(result.stdout)["results"]
        assert ctxsearch("info", "--index", index).returncode == 0
        verified = ctxsearch("verify", "--index", index)
        assert verified.returncode == 0 and "consistent" in verified.stdout, verified.stdout
        refused = ctxsearch("index", notes, "--index", index)
        assert refused.returncode == 1 and "read-only" in refused.stderr, refused.stderr
    finally:
        os.chmod(index, 0o755)
        for path in files:
            os.chmod(path, 0o644)


def test_text_that_is_not_language_is_skipped_with_a_reason(tmp_path, notes, fast_model):
    """18. A 300 KB one-line base64 file became 802 chunks and two minutes of encoding."""
    (notes / "blob.txt").write_text(base64.b64encode(os.urandom(225_000)).decode())
    result = run("index", notes, "--index", tmp_path / "ix", "--model", fast_model, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["added"] == 4 and summary["skipped"] == 1
    [skipped] = summary["skipped_files"]
    assert skipped["path"].endswith("blob.txt") and "no natural-language text" in skipped["reason"]
    assert "skipped" in result.stderr and "blob.txt" in result.stderr


def space_bytes(index_dir: Path) -> dict[str, bytes]:
    """The vector space files (bases and deltas) of an index folder, byte for byte."""
    return {p.name: p.read_bytes() for p in index_dir.iterdir() if p.suffix in (".faiss", ".npz")}


def test_a_killed_reader_or_signal_leaves_nothing_behind(tmp_path, notes, fast_model):
    """Readers never write: a query killed mid-way leaves the index byte for byte as it was."""
    index_in_process(tmp_path / "ix", notes, fast_model)
    before = space_bytes(tmp_path / "ix")
    query = [sys.executable, "-m", "search", "query", "meadow", "--index", str(tmp_path / "ix")]
    for _ in range(20):  # until one is killed while it has the index open
        process = subprocess.Popen(query, cwd=ROOT, stdout=subprocess.DEVNULL)
        reading = until_open(process, tmp_path / "ix")
        process.send_signal(signal.SIGKILL)
        process.wait()
        if reading:
            break
    assert reading, "no query was caught reading the index"
    after = space_bytes(tmp_path / "ix")
    assert after == before and verify_target(tmp_path / "ix").consistent
