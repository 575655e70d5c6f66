"""`ctxsearch lab bench --only readers`: a real `serve` on a small synthetic index,
followed through writes."""

from __future__ import annotations

import json

from click.testing import CliRunner

from search.cli import cli


def test_the_readers_section_times_a_server_following_writes_and_a_reader_in_full_and_followed():
    result = CliRunner().invoke(
        cli, ["lab", "bench", "--only", "readers", "--store-size", "2000", "--json"]
    )
    assert result.exit_code == 0, result.output
    serve, answers, merges, reader = json.loads(result.output)["rows"]
    assert serve["seconds"] > 0
    assert len(answers["answers_seconds"]) + merges["writes"] == 10
    assert answers["resident_mb_after"] > 0
    assert reader["baseline_seconds"] > 0 and reader["seconds"] > 0 and reader["ratio"] > 0
