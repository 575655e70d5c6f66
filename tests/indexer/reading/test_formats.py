"""One registry of file formats (`indexer.reading.formats`): the walk, the readers'
dispatch, the `--type` names, the outlines, the help of `index`, the error for a folder
with nothing to read and every page that says what is read follow it."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from indexer.errors import UnindexableContent
from indexer.reading.formats import (
    FILE_TYPES,
    FORMATS,
    TEXT_KINDS,
    file_format,
    readable_summary,
    reference,
    text_kind,
)
from indexer.reading.rules import RootRules
from indexer.reading.sources import SourceFile, read_document, walk_folder
from indexer.splitting.code_outline import OUTLINED_LANGUAGES
from search.cli import cli
from tests.conftest import ROOT


def test_the_formats_page_is_current():
    page = (ROOT / "docs" / "formats.md").read_text()
    assert page == reference(), (
        "docs/formats.md is stale: run `python -m indexer.reading.formats > docs/formats.md`"
    )


def test_each_extension_names_one_format_and_each_format_is_complete():
    extensions = [extension for found in FORMATS for extension in found.extensions]
    assert len(extensions) == len(set(extensions))
    assert all(extension == extension.lower() and extension[0] == "." for extension in extensions)
    for found in FORMATS:
        assert (found.reader is None) != (found.layout_reader is None), found.name
        assert found.text_kind in TEXT_KINDS, found.name
    languages = {found.language for found in FORMATS if found.language is not None}
    assert languages == set(OUTLINED_LANGUAGES)


def test_a_name_is_read_by_the_format_of_its_longest_extension():
    assert file_format("guide.rst.txt").name == "reStructuredText"
    assert text_kind("notes/Guide.RST.TXT") == "rst" and text_kind("notes.txt") == "text"
    assert file_format("a.b/README") is None and text_kind("record:faq-12") == "text"
    assert file_format("x.tar.gz.py").language == "python"
    assert FILE_TYPES["office"] == (".docx", ".pptx", ".odt")
    assert ".rst.txt" in FILE_TYPES["rst"] and ".py" in FILE_TYPES["code"]


def test_the_walk_finds_every_extension_and_reads_the_text_formats(tmp_path):
    for number, found in enumerate(FORMATS):
        for extension in found.extensions:
            (tmp_path / f"file{number}{extension}").write_text("Cranes fly south.\n")
    (tmp_path / "data.bin").write_text("not a format")
    every_file = RootRules(default_excludes=False)  # style sheets are web assets by default
    walked = {source.path.name: source for source in walk_folder(tmp_path, rules=every_file)}
    named = {f"file{n}{e}" for n, found in enumerate(FORMATS) for e in found.extensions}
    assert set(walked) == named
    for name, source in walked.items():
        found = file_format(name)
        if found.reader is not None and found.text_kind != "office":
            assert read_document(source).text == "Cranes fly south.\n"
    assert file_format("data.bin") is None
    with pytest.raises(UnindexableContent, match="reads no format of this extension"):
        read_document(SourceFile(tmp_path / "data.bin", 12, 0))


def test_the_help_the_error_and_the_pages_name_what_the_registry_reads(tmp_path):
    summary = readable_summary()
    assert summary.startswith(".md .rst .txt") and summary.endswith(" and source code")
    assert f"Reads {summary} (docs/formats.md)" in " ".join(cli.commands["index"].help.split())
    for page in ("README.md", "docs/usage.md", "docs/errors.md"):
        assert summary in " ".join((ROOT / page).read_text().split()), page
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(
        cli, ["index", str(tmp_path / "empty"), "--index", str(tmp_path / "ix")]
    )
    assert result.exit_code == 2 and f"(readable types: {summary});" in result.output


def test_the_usage_page_lists_every_type_name():
    usage = " ".join((ROOT / "docs" / "usage.md").read_text().split())
    listed = re.search(r"`--type TYPE` \((.*?)or an extension such as", usage)
    assert listed is not None
    names = [name for name in re.findall(r"`([^`]+)`", listed.group(1)) if "." not in name]
    assert list(dict.fromkeys(names)) == list(FILE_TYPES)
