"""The PostgreSQL backend end to end: every command on a URL, hosts, errors, crashes.

A real PostgreSQL with pgvector runs for the session (see tests/support/postgres_server.py).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer import Indexer
from indexer.errors import IndexLocked
from indexer.store.backends import open_store, verify_target
from search import Searcher
from search.cli import cli
from tests.conftest import ROOT
from tests.support.crash_harness import (
    filling_to,
    index_in_process,
    mutate_corpus,
    run_indexer_process,
    start_indexer_process,
    state,
    wait_for_hold,
    wait_for_pause,
    write_corpus,
)
from tests.support.postgres_server import create_database


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(arg) for arg in args])


def test_every_command_works_on_a_database_url(postgres_index, notes, tiny_model_dir):
    result = invoke("index", notes, "--index", postgres_index, "--model", tiny_model_dir, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["added"] == 4
    for mode in ("hybrid", "contextual", "static", "lexical"):
        result = invoke("query", "savings at the bank", "--index", postgres_index, "--mode", mode,
                        "--json")  # fmt: skip
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["results"], mode
    lexical = json.loads(
        invoke("query", "meadow", "--index", postgres_index, "--mode", "lexical", "--json").stdout
    )
    assert lexical["results"][0]["path"].endswith("river.txt")
    info = json.loads(invoke("info", "--index", postgres_index, "--json").stdout)
    assert info["backend"] == "postgresql+pgvector" and info["documents"] == 4
    assert "@" in info["index"] and "password" not in info["index"]
    assert invoke("verify", "--index", postgres_index).exit_code == 0
    repaired = invoke("repair", "--index", postgres_index, "--json")
    assert repaired.exit_code == 0, repaired.output
    assert json.loads(repaired.stdout)["consistent"] is True
    compared = invoke("compare", "river bank", "--index", postgres_index, "--json")
    assert compared.exit_code == 0 and json.loads(compared.stdout)["contextual"]


def test_the_index_url_can_come_from_the_environment(postgres_index, notes, tiny_model_dir,
                                                     monkeypatch):  # fmt: skip
    monkeypatch.setenv("CTXSEARCH_INDEX", postgres_index)
    assert invoke("index", notes, "--model", tiny_model_dir).exit_code == 0
    assert json.loads(invoke("info", "--json").stdout)["documents"] == 4


def test_two_hosts_indexing_the_same_path_keep_their_own_documents(
    postgres_index, notes, tiny_model_dir, monkeypatch
):
    monkeypatch.setenv("CTXSEARCH_HOST", "alpha")
    Indexer(postgres_index, model=str(tiny_model_dir)).index_folder(notes)
    (notes / "money.txt").unlink()
    monkeypatch.setenv("CTXSEARCH_HOST", "beta")
    summary = Indexer(postgres_index).index_folder(notes)
    assert summary.added == 3 and summary.removed == 0
    assert summary.total_documents == 7
    info = json.loads(invoke("info", "--index", postgres_index, "--json").stdout)
    assert {root.split(":")[0] for root in info["roots"]} == {"alpha", "beta"}


def test_a_second_writer_gets_exit_3_and_a_killed_writer_frees_the_lock(
    postgres_index, notes, tiny_model_dir
):
    Indexer(postgres_index, model=str(tiny_model_dir)).index_folder(notes)
    holder = open_store(postgres_index)
    with holder.writer():
        result = invoke("index", notes, "--index", postgres_index)
    assert result.exit_code == 3
    assert "another ctxsearch process (pid" in result.stderr and "--wait" in result.stderr
    (notes / "extra.md").write_text("A brand new note about herons.")
    writer = start_indexer_process(
        postgres_index, notes, tiny_model_dir, env={"CTXSEARCH_PAUSE_AT": "after-batch:30"}
    )
    try:
        wait_for_pause(writer, "after-batch")  # it holds the lock, mid-run
        with pytest.raises(IndexLocked, match="another ctxsearch process"), holder.writer():
            pass
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    finally:
        writer.kill()
        holder.close()
    result = invoke("index", notes, "--index", postgres_index, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["added"] == 1


@pytest.mark.parametrize(
    "kill_at", ["after-delete", "after-batch:2", "before-publish", "after-publish"]
)
def test_a_run_killed_in_the_middle_recovers_to_the_uninterrupted_result(
    postgres_index, tmp_path, tiny_model_dir, kill_at
):
    folder = write_corpus(tmp_path / "docs")
    reference = f"{postgres_index}_ref"
    index_in_process(postgres_index, folder, tiny_model_dir)
    index_in_process(reference, folder, tiny_model_dir)
    old = state(postgres_index)
    mutate_corpus(folder)
    index_in_process(reference, folder, tiny_model_dir)
    new = state(reference)

    result = run_indexer_process(
        postgres_index, folder, tiny_model_dir, env={"CTXSEARCH_KILL_AT": kill_at}
    )
    assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]
    assert verify_target(postgres_index).consistent
    observed = state(postgres_index)
    published = kill_at == "after-publish"  # the run's first publish; its fill to come
    assert observed == old or (published and filling_to(observed, new))
    index_in_process(postgres_index, folder, tiny_model_dir)
    assert verify_target(postgres_index).consistent
    assert state(postgres_index) == new


@pytest.mark.parametrize("vector_schema", ["public", "extensions"])
def test_an_index_in_public_and_one_in_the_default_schema_keep_apart(
    postgres_server, tmp_path, tiny_model_dir, vector_schema
):
    """Issue 24 (1): with teamA in `public`, teamB (the default schema) used to fall through
    `search_path` into `public`'s tables. Wherever pgvector lives, each index keeps to its
    own schema in every command."""
    import uuid

    import psycopg
    from sqlalchemy.engine import make_url

    url = create_database(postgres_server, f"teams_{uuid.uuid4().hex[:8]}", with_vector=False)
    parsed = make_url(url)
    dsn = f"host={parsed.host} port={parsed.port} user={parsed.username} dbname={parsed.database}"
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {vector_schema}")
        connection.execute(f"CREATE EXTENSION vector SCHEMA {vector_schema}")
    teams = {}
    for team, words in (("teamA", "otters swim in the river"), ("teamB", "herons fish at dawn")):
        folder = tmp_path / team
        folder.mkdir()
        (folder / f"{team}.txt").write_text(f"{words}.\n")
        teams[team] = folder
    public, default = f"{url}?index=public", url
    assert (
        invoke("index", teams["teamA"], "--index", public, "--model", tiny_model_dir).exit_code == 0
    )
    result = invoke(
        "index", teams["teamB"], "--index", default, "--model", tiny_model_dir, "--json"
    )
    assert result.exit_code == 0, result.output
    for target, team in ((public, "teamA"), (default, "teamB")):
        listed = invoke("ls", "--index", target, "--json")
        assert listed.exit_code == 0, listed.output
        assert [Path(f["root"].split(":", 1)[1]).name for f in json.loads(listed.stdout)] == [team]
        for mode in ("hybrid", "contextual", "static", "lexical"):
            words = "otters herons river dawn"
            found = invoke("query", words, "--index", target, "--mode", mode, "--json")
            assert found.exit_code == 0, found.output
            assert {Path(hit["path"]).name for hit in json.loads(found.stdout)["results"]} == {
                f"{team}.txt"
            }, (target, mode)
        assert invoke("verify", "--index", target).exit_code == 0
    (teams["teamB"] / "teamB.txt").write_text("herons wade at dusk.\n")
    (teams["teamB"] / "egrets.txt").write_text("egrets nest in the reeds.\n")
    result = invoke("index", teams["teamB"], "--index", default)
    assert result.exit_code == 0, result.output
    assert json.loads(invoke("info", "--index", public, "--json").stdout)["documents"] == 1
    assert json.loads(invoke("info", "--index", default, "--json").stdout)["documents"] == 2


def test_an_index_built_with_another_model_is_refused(postgres_index, notes, tiny_model_dir):
    Indexer(postgres_index, model=str(tiny_model_dir)).index_folder(notes)
    result = invoke("index", notes, "--index", postgres_index, "--model", "all-MiniLM-L6-v2")
    assert result.exit_code == 2 and "built with model" in result.stderr
    with pytest.raises(Exception, match="built with model"):
        Searcher(postgres_index, model="all-MiniLM-L6-v2")


def test_unusable_databases_get_one_line_and_change_nothing(postgres_server, notes):
    from sqlalchemy.engine import make_url

    url = make_url(postgres_server)
    closed_port = url.set(port=1).render_as_string(hide_password=False)
    wrong_user = url.set(username="nobody").render_as_string(hide_password=False)
    without_vector = create_database(postgres_server, "no_vector", with_vector=False)
    missing_database = url.set(database="no_such_db").render_as_string(hide_password=False)
    cases = {
        closed_port: "cannot use the index database",
        wrong_user: 'role "nobody" does not exist',
        missing_database: 'database "no_such_db" does not exist',
        without_vector: "no `vector` extension",
        "postgresql+psycopg://localhost": "name the database",
        "postgresql+psycopg://u@h/db?index=Bad-Name": "index name",
        "postgresql+psycopg://u@h/db?index=pg_catalog": "PostgreSQL's own",
        "postgresql+asyncpg://u@h/db": "psycopg",
    }
    for target, message in cases.items():
        for command in (["index", str(notes)], ["query", "bank"], ["info"], ["verify"]):
            result = invoke(*command, "--index", target)
            assert result.exit_code in (1, 2), (target, command, result.output)
            # `verify` reports an index that does not open as a problem, on stdout
            said = result.output if command == ["verify"] else result.stderr
            assert message in said, (target, command, result.output)
            assert "Traceback" not in result.output
            errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
            assert len(errors) <= 1 and "\n" not in message, result.stderr
    assert invoke("query", "bank", "--index", without_vector).exit_code == 1
    from sqlalchemy import create_engine, text

    engine = create_engine(without_vector)
    with engine.connect() as connection:  # nothing was created in the database
        schemas = connection.execute(
            text("SELECT count(*) FROM pg_namespace WHERE nspname = 'ctxsearch'")
        ).scalar_one()
    engine.dispose()
    assert schemas == 0


def end_writer_sessions(url: str, pid: int) -> int:
    """End, as `pg_terminate_backend` does, every database session through which process
    `pid` holds a writer lock (an admin, `idle_session_timeout` or a NAT would); wait until
    they are gone. How many there were."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url.split("?")[0])
    try:
        with engine.connect() as connection:
            ended = connection.execute(
                text(
                    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 10000)) "
                    "FROM pg_stat_activity WHERE application_name = :name"
                ),
                {"name": f"ctxsearch writer pid {pid} on {socket.gethostname()}"},
            ).scalar_one()
    finally:
        engine.dispose()
    return int(ended)


def test_a_writer_that_loses_its_lock_commits_nothing(postgres_index):
    """Issue 24 (17): once the lock's session is gone a second writer is admitted, so the
    first run must not commit (it used to, from a connection of its own)."""
    from tests.indexer.store.test_store_contract import add, new_document, new_store, paths

    store = new_store(postgres_index)
    add(store, "/docs/a.txt", ["kept"])
    other = open_store(postgres_index)
    try:
        lost = r"lost its writer lock.*nothing of it was committed"
        with pytest.raises(IndexLocked, match=lost), store.writer(), store.change() as change:
            change.add_documents([new_document("/docs/b.txt", ["lost"])])
            assert end_writer_sessions(postgres_index, os.getpid()) == 1
            with other.writer(), other.change() as theirs:  # admitted: the lock is free
                theirs.add_documents([new_document("/docs/c.txt", ["theirs"], 1)])
        assert paths(other) == ["/docs/a.txt", "/docs/c.txt"]
        assert other.verify().consistent
        assert open_store(postgres_index).manifest.generation == 2
        add(store, "/docs/d.txt", ["again"], 2)  # the store that lost its lock writes again
        assert paths(other) == ["/docs/a.txt", "/docs/c.txt", "/docs/d.txt"]
    finally:
        other.close()
        store.close()


def test_a_run_that_committed_is_not_failed_by_losing_its_lock_afterwards(postgres_index):
    from tests.indexer.store.test_store_contract import add, new_document, new_store, paths

    store = new_store(postgres_index)
    add(store, "/docs/a.txt", ["kept"])
    with store.writer():
        with store.change() as change:
            change.add_documents([new_document("/docs/b.txt", ["committed"])])
        assert end_writer_sessions(postgres_index, os.getpid()) == 1
    assert paths(store) == ["/docs/a.txt", "/docs/b.txt"]
    store.close()


@pytest.mark.parametrize("point, code", [("after-batch", 3), ("after-publish", 0)])
def test_index_exits_by_whether_it_committed_when_its_lock_session_ends(
    postgres_index, tmp_path, tiny_model_dir, point, code
):
    """`ctxsearch index` whose lock session is ended mid-run exits 3 having changed
    nothing; ended after its commit, it exits 0 (it used to exit 1 either way)."""
    folder = write_corpus(tmp_path / "docs")
    index_in_process(postgres_index, folder, tiny_model_dir)
    old = state(postgres_index)
    mutate_corpus(folder)
    command = [sys.executable, "-m", "search", "index", str(folder), "--index", postgres_index]
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    writer = subprocess.Popen(
        [*command, "--quiet", "--json"],
        cwd=ROOT,
        env={**os.environ, "CTXSEARCH_HOLD_AT": f"{point}:{gate}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_hold(writer, point)
        assert end_writer_sessions(postgres_index, writer.pid) == 1
        holder = open_store(postgres_index)
        if point == "after-batch":
            with holder.writer():  # a second writer is admitted while the first waits
                pass
        holder.close()
        with open(gate, "wb"):  # let the run go on
            pass
        out, err = writer.communicate(timeout=120)
    finally:
        writer.kill()
    assert writer.returncode == code, err
    assert "Traceback" not in err
    if code:
        assert "lost its writer lock" in err and "nothing of it was committed" in err
        assert state(postgres_index) == old
    else:
        assert json.loads(out)["added"] > 0 and state(postgres_index) != old
    assert verify_target(postgres_index).consistent


def test_a_commit_whose_answer_is_lost_counts_as_committed(postgres_index, monkeypatch):
    """The connection drops while the run commits, after the server committed: the run
    asks the database, finds its generation published, and reports success."""
    from sqlalchemy.engine import make_url

    import indexer.store.postgres.store as postgres_store
    from tests.indexer.store.test_store_contract import add, new_document, new_store, paths
    from tests.support.cutting_proxy import CuttingProxy

    url = make_url(postgres_index.split("?")[0])
    proxy = CuttingProxy(url.host, url.port)
    proxied = postgres_index.replace(f":{url.port}/", f":{proxy.port}/")
    reached = postgres_store.kill_point

    def arm_before_publish(name: str) -> None:
        if name == "before-publish":
            proxy.arm()
        reached(name)

    try:
        store = new_store(proxied)
        add(store, "/docs/a.txt", ["kept"])
        monkeypatch.setattr(postgres_store, "kill_point", arm_before_publish)
        with store.writer(), store.change() as change:
            change.add_documents([new_document("/docs/b.txt", ["committed"])])
        assert proxy.cut.is_set(), "the commit's answer was not lost"
        assert store.manifest.generation == 2
        store.close()
        direct = open_store(postgres_index)
        assert paths(direct) == ["/docs/a.txt", "/docs/b.txt"]
        assert direct.manifest.generation == 2 and direct.verify().consistent
        direct.close()
    finally:
        proxy.close()


@pytest.mark.parametrize("query, idle", [("", b"30"), ("&keepalives_idle=7", b"7")])
def test_connections_send_keepalives_unless_the_url_says_otherwise(postgres_index, query, idle):
    """An idle writer-lock session must survive a NAT: TCP keepalives are on by default."""
    store = open_store(postgres_index + query, create=True)
    try:
        with store.engine.connect() as connection:
            pgconn = connection.connection.dbapi_connection.pgconn  # type: ignore[union-attr]
            options = {option.keyword: option.val for option in pgconn.info}
    finally:
        store.close()
    assert options[b"keepalives"] == b"1" and options[b"keepalives_idle"] == idle
