"""Shared fixtures: the real default model (loaded once), sample folders, indexed corpora."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # One worker of several on few cores: torch (here and in the processes tests start)
    # on one thread each, so that workers never wait on each other's thread barriers.
    os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CORPUS = ROOT / "sample_corpus"
SHARED_EVAL = ROOT.parent / "shared" / "eval"
TOKEN = "pässwort"  # the token of `token_server`: not ASCII, not even Latin-1 on the wire


# What marks a test that needs a heavy service, by the fixtures it uses (their closure).
_MARKED_BY_FIXTURES = {
    "postgres": {"postgres_server", "postgres_index"},
    "ray": {"ray_cluster"},
    "browser": {"browser", "page"},
}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items):
    """Mark every test that starts PostgreSQL, a Ray cluster or Chromium, so that
    `-m 'not postgres and not ray and not browser'` leaves them out (`make quick`), and
    every test of the lab (tests/lab/), so that `-m 'not lab'` leaves the lab out. Under
    pytest-xdist (`--dist loadgroup`) the Ray tests share one worker, and so one cluster."""
    for item in items:
        if item.path.is_relative_to(ROOT / "tests" / "lab"):
            item.add_marker("lab")
        used = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("any_index") == "postgres":
            used.add("postgres_index")
        for marker, fixtures in _MARKED_BY_FIXTURES.items():
            if used & fixtures:
                item.add_marker(marker)
        if item.get_closest_marker("ray"):
            item.add_marker(pytest.mark.xdist_group("ray"))


@pytest.fixture(autouse=True)
def _no_user_settings(monkeypatch):
    """A developer's own CTXSEARCH_INDEX, CTXSEARCH_CACHE or CTXSEARCH_EVAL_CACHE never
    steers a test (the tests set what they need)."""
    for name in ("CTXSEARCH_INDEX", "CTXSEARCH_CACHE", "CTXSEARCH_EVAL_CACHE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def model():
    """The real all-MiniLM-L6-v2, loaded once for the whole session."""
    from indexer.encoders.loading import load_model

    return load_model()


@pytest.fixture(scope="session")
def fast_model() -> str:
    """The model name of the test encoder, `hashed-words` (a hashed bag of words, no
    torch): for tests where the model is not the point. Pass it as `model=` or `--model`;
    an index built with it is queried with it too."""
    from indexer.encoders.hashed import HASHED_MODEL

    return HASHED_MODEL


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory) -> Path:
    """The bundled sample corpus, indexed once (read-only for tests)."""
    from indexer import Indexer

    directory = tmp_path_factory.mktemp("sample") / "index"
    Indexer(directory).index_folder(SAMPLE_CORPUS)
    return directory


@pytest.fixture
def notes(tmp_path) -> Path:
    """A small folder of notes in several formats, with things the walk must skip."""
    folder = tmp_path / "notes"
    (folder / "garden").mkdir(parents=True)
    (folder / "garden" / "roses.md").write_text(
        "# Roses\n\nPrune roses in late winter. Feed them in spring with compost.\n"
    )
    (folder / "money.txt").write_text(
        "A savings account at the bank earns interest on the money you deposit.\n"
    )
    (folder / "river.txt").write_text(
        "The river overflowed its bank and flooded the meadow after the storm.\n"
    )
    (folder / "page.html").write_text(
        "<html><head><title>Cranes</title><style>p {color: red}</style></head>"
        "<body><p>Tower cranes lift steel beams.</p><script>var secret = 1;</script></body></html>"
    )
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "secret.md").write_text("hidden folders are never indexed")
    (folder / ".git").mkdir()
    (folder / ".git" / "config.txt").write_text("git internals are never indexed")
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    return folder


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A real BERT with small random weights (seeded) and the default model's tokenizer.

    Loading it still costs an import of torch, but encoding with it is nearly free, so
    tests that run many indexer processes stay fast.
    """
    import torch
    from transformers import BertConfig, BertModel

    from indexer.encoders.loading import DEFAULT_MODEL, model_location

    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(folder)
    source = Path(model_location(DEFAULT_MODEL))
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(source / name, folder / name)
    return folder


def copy_sample_corpus(destination: Path) -> Path:
    """A private, writable copy of the sample corpus."""
    return Path(shutil.copytree(SAMPLE_CORPUS, destination))


def make_pdf(lines: list[str]) -> bytes:
    """A minimal valid one-page PDF whose text layer holds `lines`."""
    text_ops = " ".join(f"({line}) Tj T*" for line in lines)
    stream = f"BT /F1 12 Tf 14 TL 72 720 Td {text_ops} ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    output = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(output))
        output += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(output)
    output += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    output += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    output += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(output)


@pytest.fixture(scope="session")
def sample_server(sample_index, tmp_path_factory):
    """`ctxsearch serve` over the sample index, in its own process, for the whole session."""
    from tests.support.serving import running_server

    with running_server(sample_index, tmp_path_factory.mktemp("server") / "server.log") as server:
        yield server


@pytest.fixture(scope="session")
def token_server(sample_index, tmp_path_factory):
    """`ctxsearch serve` over the sample index with a non-ASCII token and one more host
    names it answers for: `--token pässwort --allowed-host notes.example
    --allowed-host proxy.example:8443`."""
    from tests.support.serving import running_server

    log = tmp_path_factory.mktemp("token-server") / "server.log"
    args = ("--token", TOKEN, "--allowed-host", "notes.example")
    args += ("--allowed-host", "proxy.example:8443")
    with running_server(sample_index, log, *args) as server:
        yield server


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL with pgvector on 127.0.0.1 for the whole test session."""
    from tests.support.postgres_server import running_postgres

    with running_postgres() as url:
        yield url


@pytest.fixture
def postgres_index(postgres_server, request) -> str:
    """The URL of a new, empty index of its own in the session's database."""
    import uuid

    return f"{postgres_server}?index=t_{uuid.uuid4().hex[:12]}"


@pytest.fixture(params=["local", "postgres"])
def any_index(request, tmp_path) -> str | Path:
    """A new index target on each backend: a folder, then a PostgreSQL URL."""
    if request.param == "local":
        return tmp_path / "ix"
    return request.getfixturevalue("postgres_index")
