"""The documentation stays true to the code: the generated command reference is current,
and every page the README links to exists."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_the_command_reference_is_current():
    from search.cli.reference import reference

    committed = (ROOT / "docs" / "cli.md").read_text()
    assert committed == reference(), (
        "docs/cli.md is stale: run `python -m search.cli.reference > docs/cli.md`"
    )


def test_the_readme_is_short_and_its_links_resolve():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    for target in re.findall(r"\]\(((?:docs/)[^)#]*)", readme):
        assert (ROOT / target).exists(), f"README links to {target}, which does not exist"


def test_links_between_doc_pages_resolve():
    for page in (ROOT / "docs").rglob("*.md"):
        for target in re.findall(r"\]\(([^)#:]+\.(?:md|png|txt))", page.read_text()):
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_the_command_reference_names_the_help_options_a_user_has():
    """`ctxsearch -h` works (the group's context settings), so the page says `-h, --help`,
    whichever test invoked the commands before it was written."""
    import subprocess
    import sys

    from search.cli.reference import reference

    real = subprocess.run(
        [sys.executable, "-m", "search", "info", "--help"], capture_output=True, text=True
    ).stdout
    assert "-h, --help" in real
    shown = [line.split()[:2] for line in reference().splitlines() if "Show this message" in line]
    assert shown and all(names == ["-h,", "--help"] for names in shown)
