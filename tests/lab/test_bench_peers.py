"""`ctxsearch lab bench --only peers`: the side-by-side indexing table's plumbing, on a
few tiny documents. The peers run only where their virtualenv was made already (the
command makes it from the registry; a test never does)."""

import json

from click.testing import CliRunner

from lab.peer_venv import PEER_PACKAGES, TORCH, default_peers_venv
from search.cli import cli

ABSTRACTS = [
    {"_id": "1", "title": "Cranes", "text": "Tower cranes stay upright by counterweights."},
    {"_id": "2", "title": "Bread", "text": "Yeast makes bread rise by releasing gas."},
    {"_id": "3", "title": "Never read", "text": "Past the limit of two documents."},
]


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output + result.stderr
    return result


def _installed_peers() -> str:
    """The quickest peer if the peers' virtualenv is made and complete, else none."""
    marker = default_peers_venv() / ".ctxsearch-peers"
    complete = marker.exists() and marker.read_text() == "\n".join((TORCH, *PEER_PACKAGES))
    return "sentence-transformers" if complete else ""


def test_the_peers_section_prints_a_row_per_system_and_the_ceiling(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(abstract) + "\n" for abstract in ABSTRACTS))
    peers = _installed_peers()
    result = run(
        "lab", "bench", "--only", "peers", "--texts", tmp_path, "--limit", 2, "--rounds", 1,
        "--peers", peers, "--setting", "", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output + result.stderr
    rows = {row["benchmark"]: row for row in json.loads(result.stdout)["rows"]}
    ctxsearch = rows["ctxsearch"]
    assert ctxsearch["passages"] == 2 and ctxsearch["tokens"] > 2 * 10
    assert ctxsearch["docs_per_second"] > 0 and ctxsearch["peak_megabytes"] > 0
    assert len(ctxsearch["load"]) == 1
    if peers:
        assert rows[peers]["passages"] == 2 and rows[peers]["ratio"] == 1.0
        assert ctxsearch["ratio"] > 0
    else:
        assert ctxsearch["ratio"] is None  # no peer: nothing to compare with
    assert rows["matmul probe, bf16"]["gflops"] > 0
    encoder = rows[next(name for name in rows if name.startswith("ctxsearch's contextual"))]
    assert encoder["tokens"] == ctxsearch["tokens"]
    assert encoder["share_of_bf16_ceiling"] > 0


def test_the_peers_section_needs_a_corpus_and_known_peers():
    missing = run("lab", "bench", "--only", "peers")
    assert missing.exit_code == 2
    assert "the peers section needs --texts" in missing.stderr
    unknown = run("lab", "bench", "--only", "peers", "--peers", "elastic")
    assert unknown.exit_code == 2
    assert "unknown peer elastic; choose from llm, chroma, txtai" in unknown.stderr
