"""`compare`: two modes' results for one query, side by side, on the sample index."""

import json

from click.testing import CliRunner

from search.cli import cli


def run_json(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args] + ["--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_compare_marks_rank_changes(sample_index):
    payload = run_json(
        "compare",
        "where can I open a savings account at the bank",
        "--index",
        sample_index,
        "-k",
        "5",
    )
    assert payload["query"].startswith("where can I")
    assert len(payload["static"]) == len(payload["contextual"]) == 5
    static_ranks = {hit["document_id"]: hit["rank"] for hit in payload["static"]}
    for hit in payload["contextual"]:
        other = static_ranks.get(hit["document_id"])
        assert hit["other_rank"] == other
        expected = (
            "new"
            if other is None
            else "up"
            if other > hit["rank"]
            else "down"
            if other < hit["rank"]
            else "same"
        )
        assert hit["change"] == expected
    contextual_docs = {hit["document_id"] for hit in payload["contextual"]}
    for hit in payload["static"]:
        assert hit["change"] == ("kept" if hit["document_id"] in contextual_docs else "vanished")


def test_compare_human_output_has_both_columns(sample_index):
    result = CliRunner().invoke(cli, ["compare", "python snake", "--index", str(sample_index)])
    assert result.exit_code == 0
    assert "static" in result.stdout.splitlines()[1] and "contextual" in result.stdout
