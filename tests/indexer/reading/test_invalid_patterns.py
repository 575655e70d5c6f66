"""An invalid gitignore pattern, given as --exclude/--include or as a line of
`.ctxsearchignore`, is one clear line naming it, never a traceback; nothing is changed,
and a running `watch` says so and goes on watching."""

import re

import pytest
from click.testing import CliRunner

from indexer.errors import InvalidIgnoreFile, InvalidPattern
from indexer.reading.rules import RootRules
from indexer.reading.sources import walk_folder
from search.cli import cli
from tests.search.cli.test_watch import found
from tests.support.watching import PATIENCE_SECONDS, Watched

BAD_PATTERNS = ["[z-a]", "\\", "!"]


def folder(tmp_path, text: str = "Herons wade in shallow water."):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text(text)
    return docs


@pytest.mark.parametrize("option", ["--exclude", "--include"])
@pytest.mark.parametrize("pattern", BAD_PATTERNS)
def test_a_bad_pattern_option_is_a_usage_error_naming_it(tmp_path, option, pattern):
    docs, index = folder(tmp_path), tmp_path / "ix"
    result = CliRunner().invoke(cli, ["index", str(docs), "--index", str(index), option, pattern])
    assert result.exit_code == 2, result.output
    error = result.stderr.splitlines()[-1]
    assert error.startswith("Error: ") and f"{pattern!r} is not a valid gitignore" in error
    assert "Traceback" not in result.output and not index.exists()


@pytest.mark.parametrize("pattern", BAD_PATTERNS)
def test_the_library_refuses_a_bad_pattern_with_a_typed_error(pattern):
    with pytest.raises(InvalidPattern, match="is not a valid gitignore pattern"):
        RootRules(exclude=("*.log", pattern))


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (b"drafts/\n[z-a]\n", "line 2: '[z-a]'"),
        (b"# trailing backslash\n\\\n", "line 2: '\\\\'"),
        (b"!\n", "line 1: '!'"),
        (b"caf\xe9/\n", "not UTF-8 text"),
    ],
)
def test_a_bad_ignore_file_fails_the_run_in_one_line_and_changes_nothing(
    tmp_path, tiny_model_dir, content, where
):
    docs, index = folder(tmp_path), str(tmp_path / "ix")
    runner = CliRunner()
    model = ["--model", str(tiny_model_dir), "--quiet"]
    assert runner.invoke(cli, ["index", str(docs), "--index", index, *model]).exit_code == 0
    (docs / ".ctxsearchignore").write_bytes(content)
    (docs / "egrets.md").write_text("Egrets follow cattle across the field.")
    with pytest.raises(InvalidIgnoreFile, match=re.escape(where)):
        list(walk_folder(docs))
    result = runner.invoke(cli, ["index", str(docs), "--index", index, *model])
    assert result.exit_code == 1, result.output
    error = result.stderr.splitlines()
    assert len(error) == 1 and ".ctxsearchignore" in error[0] and where in error[0], error
    assert found(tmp_path / "ix", "egrets") == [] and found(tmp_path / "ix", "herons")


def test_a_running_watch_reports_a_bad_ignore_file_and_goes_on(tmp_path, fast_model):
    docs, index = folder(tmp_path), tmp_path / "ix"
    ignore_file = docs / ".ctxsearchignore"
    ignore_file.write_text("drafts/\n[z-a]\n")  # bad from the start: the first run says so
    args = [str(docs), "--index", str(index), "--model", fast_model, "--debounce", "200"]
    watched = Watched(args, tmp_path)

    def reported(times: int) -> bool:
        return watched.stderr().count("(still watching)") >= times

    try:
        watched.until(lambda: reported(1), "the bad ignore file reported")
        assert watched.process.poll() is None, watched.stderr()
        assert "line 2: '[z-a]' is not a valid gitignore pattern" in watched.stderr()
        (docs / "egrets.md").write_text("Egrets follow cattle across the field.")
        ignore_file.write_text("drafts/\n")  # the watcher was armed before the first run
        watched.until(lambda: found(index, "egrets") == ["egrets.md"], "the run after the fix")
        assert found(index, "herons") == ["herons.md"]
        ignore_file.write_text("!\n")  # broken again under the running watch
        watched.until(lambda: reported(2), "the second bad ignore file reported")
        assert watched.process.poll() is None, watched.stderr()
        watched.process.terminate()
        assert watched.process.wait(timeout=PATIENCE_SECONDS) == 0
    finally:
        watched.stop()
    log = watched.stderr()
    assert "Traceback" not in log and log.splitlines()[-1] == "ctxsearch: stopped", log
    assert found(index, "egrets") == ["egrets.md"]  # the broken file changed nothing
