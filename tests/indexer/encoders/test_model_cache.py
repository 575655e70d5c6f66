"""The model cache of the ONNX query export: a damaged entry is set aside and made again,
an unwritable cache costs the fast path and never a run or a query, and the staging
folders of killed exports are swept. Real exports of a tiny BERT, real query processes."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from indexer import Indexer
from indexer.encoders.export import export_query_model
from indexer.encoders.loading import load_model
from indexer.encoders.model_cache import entry_state, sweep_staging
from indexer.encoders.onnx import query_model_dir
from search.cli import cli
from search.engine import Searcher
from tests.conftest import ROOT

SEARCH = (sys.executable, "-m", "search")
DOCUMENTS = {
    "money.txt": "A savings account at the bank earns interest on the money you deposit.",
    "river.txt": "The river overflowed its bank and flooded the meadow after the storm.",
    "cranes.txt": "Tower cranes lift steel beams; a counterweight keeps them upright.",
}


def _write_documents(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in DOCUMENTS.items():
        (folder / name).write_text(text + "\n")
    return folder


@pytest.fixture(scope="module")
def tiny(tiny_model_dir, tmp_path_factory) -> SimpleNamespace:
    """A folder indexed with the tiny BERT, and the model's export as it should be."""
    root = tmp_path_factory.mktemp("model-cache")
    folder = _write_documents(root / "docs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        Indexer(root / "index", model=str(tiny_model_dir)).index_folder(folder)
        loaded = load_model(str(tiny_model_dir))
        pristine = query_model_dir(loaded.fingerprint)
    assert (pristine / "info.json").exists()
    return SimpleNamespace(
        model_dir=tiny_model_dir, loaded=loaded, folder=folder, index=root / "index",
        pristine=pristine,
    )  # fmt: skip


@pytest.fixture
def entry(tiny, tmp_path, monkeypatch) -> Path:
    """This test's own model cache (through $XDG_CACHE_HOME), holding a good export."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = query_model_dir(tiny.loaded.fingerprint)
    shutil.copytree(tiny.pristine, folder)
    return folder


def _set_aside(entry: Path) -> list[Path]:
    return sorted(entry.parent.glob(f"{entry.name}.damaged-*"))


def _staging(cache: Path) -> list[str]:
    """Folders in the model cache that are neither an export nor a set-aside one."""
    if not cache.is_dir():
        return []
    return sorted(p.name for p in cache.iterdir() if p.is_dir() and p.name.startswith("."))


def _truncate(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _garble(path: Path) -> None:
    """Overwrite the middle of `path` with junk: the size stays, the content does not."""
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.seek(size // 4)
        handle.write(b"\xff" * (size // 2))


def _query(index: Path, mode: str, *options: str) -> subprocess.CompletedProcess:
    """A real `python -m search query` process with this test's environment."""
    return subprocess.run(
        [*SEARCH, "query", "tower crane", "--index", str(index), "--mode", mode, "--json",
         *options],
        capture_output=True, text=True, cwd=ROOT, env=dict(os.environ), timeout=300,
    )  # fmt: skip


# The damage, and the mode whose query it broke before (a traceback, or "Aborted!").
DAMAGES = [
    pytest.param("model.onnx", _truncate, "hybrid", id="model.onnx-truncated"),
    pytest.param("model.onnx.data", _truncate, "hybrid", id="model.onnx.data-truncated"),
    pytest.param("tokenizer.json", _truncate, "static", id="tokenizer.json-truncated"),
    pytest.param("token_table.npy", _empty, "static", id="token_table.npy-empty"),
]


@pytest.mark.parametrize(("name", "damage", "mode"), DAMAGES)
def test_a_damaged_export_is_set_aside_and_the_query_answered_with_torch(
    tiny, entry, name, damage, mode
):
    damage(entry / name)
    completed = _query(tiny.index, mode)
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr and "Aborted" not in completed.stderr
    payload = json.loads(completed.stdout)
    assert payload["results"]
    assert "torch" in payload["query_encoder"].values()
    assert "damaged" in payload["query_encoder_note"]
    assert "\n" not in payload["query_encoder_note"]
    assert len(_set_aside(entry)) == 1
    # torch stood in, and exported the model again for the next query
    again = json.loads(_query(tiny.index, mode).stdout)
    assert "torch" not in again["query_encoder"].values()
    assert [hit["chunk_id"] for hit in again["results"]] == [
        hit["chunk_id"] for hit in payload["results"]
    ]


def test_a_truncated_export_of_the_default_model_is_made_again(model, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = _write_documents(tmp_path / "docs")
    index = tmp_path / "index"
    assert Indexer(index).index_folder(folder).query_export == "ready"
    entry = query_model_dir(model.fingerprint)
    _truncate(entry / "model.onnx.data")
    with Searcher(index, one_shot=True) as searcher:
        response = searcher.search("savings account", mode="hybrid")
    assert response.query_encoder == {"contextual": "torch"}
    assert "damaged" in response.query_encoder_note
    assert response.results[0].path.endswith("money.txt")
    assert entry_state(entry, thorough=True).ready  # made again by the torch that stood in
    with Searcher(index, one_shot=True) as searcher:
        again = searcher.search("savings account", mode="hybrid")
    assert again.query_encoder == {"contextual": "onnx"}
    assert [hit.chunk_id for hit in again.results] == [hit.chunk_id for hit in response.results]


@pytest.mark.parametrize("name", ["tokenizer.json", "model.onnx"])
def test_an_export_that_will_not_load_is_set_aside_even_at_its_right_size(tiny, entry, name):
    _garble(entry / name)
    mode = "static" if name == "tokenizer.json" else "contextual"
    with Searcher(tiny.index, one_shot=True) as searcher:
        response = searcher.search("tower crane", mode=mode)
    assert response.results
    assert response.query_encoder[mode] == "torch"  # (every mode encodes contextual too)
    assert "would not load" in response.query_encoder_note
    assert len(_set_aside(entry)) == 1


def test_query_encoder_onnx_with_a_damaged_export_fails_in_one_line(tiny, entry):
    _truncate(entry / "model.onnx")
    completed = _query(tiny.index, "contextual", "--query-encoder", "onnx")
    assert completed.returncode == 1
    assert completed.stderr.count("\n") == 1 and "damaged" in completed.stderr


def test_an_index_run_that_encodes_makes_a_damaged_export_again(tiny, entry, tmp_path):
    _garble(entry / "model.onnx.data")  # same size: only the recorded hashes tell
    folder = _write_documents(tmp_path / "docs")
    index = tmp_path / "index"
    summary = Indexer(index, model=str(tiny.model_dir)).index_folder(folder)
    assert summary.query_export == "ready"
    assert len(_set_aside(entry)) == 1
    assert entry_state(entry, thorough=True).ready


def test_an_unchanged_index_run_makes_a_damaged_export_again(tiny, entry, tmp_path):
    folder = _write_documents(tmp_path / "docs")
    index = tmp_path / "index"
    Indexer(index, model=str(tiny.model_dir)).index_folder(folder)
    _truncate(entry / "tokenizer.json")
    summary = Indexer(index).index_folder(folder)
    assert summary.unchanged == len(DOCUMENTS)
    assert summary.query_export == "ready"
    assert len(_set_aside(entry)) == 1
    assert entry_state(entry, thorough=True).ready
    # a good export is left alone, and the model is not even loaded for it
    quiet = Indexer(index)
    assert quiet.index_folder(folder).query_export == ""
    assert quiet.encoders.loaded is None


def test_only_the_newest_damaged_export_is_kept(tiny, entry):
    for _ in range(3):
        _truncate(entry / "model.onnx")
        with Searcher(tiny.index) as searcher:
            assert searcher.search("tower crane", mode="contextual").query_encoder == {
                "contextual": "torch"
            }
        assert entry_state(entry).ready  # made again by the torch that stood in
    assert len(_set_aside(entry)) == 1


def test_an_export_of_an_older_ctxsearch_is_replaced_not_kept(tiny, entry):
    (entry / "complete.json").unlink()  # as written before completion markers
    with Searcher(tiny.index) as searcher:
        response = searcher.search("tower crane", mode="contextual")
    assert response.query_encoder == {"contextual": "torch"}
    assert "older ctxsearch" in response.query_encoder_note
    assert entry_state(entry, thorough=True).ready
    assert _set_aside(entry) == []


def test_the_export_is_on_disk_before_it_is_published(tiny, tmp_path, monkeypatch):
    """Every file of the export and its folder are fsynced before the rename that
    publishes it, and the cache folder after it."""
    synced: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        real_fsync(descriptor)

    def replace(source, target) -> None:
        synced.append(f"replace {source} -> {target}")
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    folder = export_query_model(tiny.loaded, tmp_path / "cache")
    published = next(i for i, item in enumerate(synced) if item.endswith(f"-> {folder}"))
    staging = synced[published].split()[1]
    before = set(synced[:published])
    assert {f"{staging}/{path.name}" for path in folder.iterdir()} <= before
    assert staging in before
    assert str(folder.parent) in synced[published + 1 :]


# -- an unwritable model cache ---------------------------------------------------------


def _check_the_run_and_the_queries(result_stdout: str, exit_code: int) -> None:
    assert exit_code == 0
    export = json.loads(result_stdout)["query_export"]
    assert export.startswith("the ONNX export") and "cache" in export


@pytest.mark.parametrize("in_the_way", ["ctxsearch/models", "ctxsearch"])
def test_a_file_where_the_model_cache_goes_costs_only_the_fast_path(
    tiny, tmp_path, monkeypatch, in_the_way
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    blocker = tmp_path / "cache" / in_the_way
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("not a folder")
    folder = _write_documents(tmp_path / "docs")
    index = tmp_path / "index"
    arguments = ["index", str(folder), "--index", str(index), "--model", str(tiny.model_dir)]
    result = CliRunner().invoke(cli, [*arguments, "--quiet", "--json"])
    _check_the_run_and_the_queries(result.stdout, result.exit_code)
    for mode in ("hybrid", "static", "contextual"):
        answer = CliRunner().invoke(cli, ["query", "tower crane", "--index", str(index),
                                          "--mode", mode, "--json"])  # fmt: skip
        assert answer.exit_code == 0, answer.output
        assert json.loads(answer.stdout)["results"]
    assert blocker.read_text() == "not a folder"


def _read_only(cache: Path, *command: str) -> list[str]:
    """`command` in a mount namespace of its own where `cache` is a read-only bind mount."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, str(cache), *command]


def test_a_read_only_model_cache_costs_only_the_fast_path(tiny, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    probe = shutil.which("unshare") and subprocess.run(
        _read_only(cache, "touch", str(cache / "probe")), capture_output=True
    )
    if not probe or b"Read-only file system" not in probe.stderr:
        pytest.skip("no read-only bind mount here (it needs root and mount namespaces)")
    folder = _write_documents(tmp_path / "docs")
    index = tmp_path / "index"
    run = subprocess.run(
        _read_only(cache, *SEARCH, "index", str(folder), "--index", str(index), "--model",
                   str(tiny.model_dir), "--quiet", "--json"),
        capture_output=True, text=True, cwd=ROOT, env=dict(os.environ), timeout=300,
    )  # fmt: skip
    _check_the_run_and_the_queries(run.stdout, run.returncode)
    for mode in ("hybrid", "static"):
        answer = subprocess.run(
            _read_only(cache, *SEARCH, "query", "tower crane", "--index", str(index),
                       "--mode", mode, "--json"),
            capture_output=True, text=True, cwd=ROOT, env=dict(os.environ), timeout=300,
        )  # fmt: skip
        assert answer.returncode == 0, answer.stderr
        assert json.loads(answer.stdout)["results"]
    assert list(cache.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permission bits")
def test_a_model_cache_without_write_permission_costs_only_the_fast_path(
    tiny, tmp_path, monkeypatch
):
    cache = tmp_path / "cache"
    (cache / "ctxsearch" / "models").mkdir(parents=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    (cache / "ctxsearch" / "models").chmod(0o555)
    try:
        folder = _write_documents(tmp_path / "docs")
        index = tmp_path / "index"
        arguments = ["index", str(folder), "--index", str(index), "--model", str(tiny.model_dir)]
        result = CliRunner().invoke(cli, [*arguments, "--quiet", "--json"])
        _check_the_run_and_the_queries(result.stdout, result.exit_code)
        answer = CliRunner().invoke(cli, ["query", "crane", "--index", str(index), "--json"])
        assert answer.exit_code == 0, answer.output
    finally:
        (cache / "ctxsearch" / "models").chmod(0o755)


# -- staging folders of killed exports -------------------------------------------------


def _index_process(tiny, index: Path, environment: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [*SEARCH, "index", str(tiny.folder), "--index", str(index), "--model",
         str(tiny.model_dir), "--quiet"],
        cwd=ROOT, env={**os.environ, **environment}, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_a_kill_during_the_export_leaves_no_staging_folder_behind(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    models = tmp_path / "cache" / "ctxsearch" / "models"
    for number in range(2):
        index = tmp_path / f"index-{number}"
        killed = _index_process(tiny, index, {"CTXSEARCH_KILL_AT": "mid-export"})
        killed.communicate(timeout=300)
        assert killed.returncode == -9
    # a killed export's folder is swept by the next export, and by an unchanged run
    assert len(_staging(models)) == 1
    summary = Indexer(index).index_folder(tiny.folder)  # the run committed before the kill
    assert summary.unchanged == len(DOCUMENTS)
    assert _staging(models) == []


def test_the_staging_folder_of_a_live_export_is_left_alone(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    models = tmp_path / "cache" / "ctxsearch" / "models"
    exporting = _index_process(tiny, tmp_path / "index", {"CTXSEARCH_PAUSE_AT": "mid-export:120"})
    try:
        for line in exporting.stderr:
            if "paused at mid-export" in line:
                break
        assert len(_staging(models)) == 1
        sweep_staging(models)
        assert len(_staging(models)) == 1
    finally:
        exporting.kill()
        exporting.wait()
    sweep_staging(models)
    assert _staging(models) == []


def test_staging_folders_of_other_machines_are_swept_only_when_old(tmp_path):
    models = tmp_path / "models"
    names = {
        "recent": ".onnx-0123456789abcdef.staging-4242-k3y-elsewhere.example",
        "old": ".onnx-0123456789abcdef.staging-4343-k3y-elsewhere.example",
        "older format": ".onnx-0123456789abcdef-x1y2z3w4",
    }
    for name in names.values():
        (models / name).mkdir(parents=True)
        (models / name / "model.onnx.data").write_bytes(b"\0" * 1024)
    two_hours_ago = (Path(models).stat().st_mtime - 7200,) * 2
    for key in ("old", "older format"):
        os.utime(models / names[key], two_hours_ago)
    sweep_staging(models)
    assert _staging(models) == [names["recent"]]


def test_an_export_is_hashed_once_not_in_every_new_process(tiny, entry, monkeypatch):
    # Each `index` process hashed the whole export (96 MB for the default model) again.
    loaded = tiny.loaded
    first = _count_hashes(entry, loaded, monkeypatch)
    second = _count_hashes(entry, loaded, monkeypatch)
    assert first and second == []


def test_a_file_of_the_export_changed_in_place_is_hashed_again_and_found(tiny, entry, monkeypatch):
    loaded = tiny.loaded
    assert _count_hashes(entry, loaded, monkeypatch)
    data = entry / "model.onnx.data"
    stat = data.stat()
    _garble(data)
    os.utime(data, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even with its old mtime
    assert "model.onnx.data" in _count_hashes(entry, loaded, monkeypatch)
    assert _set_aside(entry)  # found damaged, set aside, made again
    assert entry_state(entry, thorough=True).ready


def _count_hashes(entry: Path, loaded, monkeypatch) -> list[str]:
    """The files of `entry` that `export_query_model` hashes in a new process (the
    in-process memory of earlier checks, where there is one, forgotten)."""
    import indexer.encoders.export as export
    import indexer.encoders.model_cache as model_cache

    if hasattr(export, "_verified"):
        monkeypatch.setattr(export, "_verified", set())
    hashed: list[str] = []
    real = model_cache._sha256

    def counting(path: Path) -> str:
        hashed.append(path.name)
        return real(path)

    with monkeypatch.context() as patch:
        patch.setattr(model_cache, "_sha256", counting)
        assert export_query_model(loaded) == entry
    return hashed
