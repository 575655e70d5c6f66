"""`ctxsearch bench --only postgres`: what it needs before it starts a server."""

from __future__ import annotations

from click.testing import CliRunner

from search.cli import cli


def test_the_postgres_section_needs_queries_and_texts_or_vectors(tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "otters"}\n')
    runner = CliRunner()
    alone = runner.invoke(cli, ["bench", "--only", "postgres", "--queries", str(queries)])
    assert alone.exit_code == 2
    assert "needs --queries and --texts (BEIR) or --vectors (.npy)" in alone.output
    assert "Traceback" not in alone.output
