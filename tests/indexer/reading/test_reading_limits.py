"""Each file's reading is bounded by what it produces and does, not only by its bytes: the
text (MAX_TEXT_CHARACTERS), the parts a reader walks (MAX_PARTS) and the time it takes
(MAX_READING_SECONDS). A file over one is its own failure; its indexed version is removed
for a limit of what it makes, kept for the time limit (which depends on the machine)."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.errors import UnreadableFile
from indexer.reading.limits import MAX_PARTS, MAX_TEXT_CHARACTERS, ReadingLimits
from indexer.reading.office import read_docx, read_epub, read_odt, read_pptx
from indexer.reading.readers import read_pdf
from indexer.reading.sources import SourceFile, read_document
from search.cli import cli
from tests.conftest import make_pdf
from tests.indexer.reading.test_office_readers import make_docx, make_epub, make_odt, make_pptx
from tests.search.cli.test_watch import found

WORDS = "the river runs on "  # 18 characters


def docx_with_body(body: bytes) -> bytes:
    """A real python-docx document whose body starts with the given WordprocessingML."""
    import docx

    out = io.BytesIO()
    docx.Document().save(out)
    source = zipfile.ZipFile(io.BytesIO(out.getvalue()))
    result = io.BytesIO()
    with zipfile.ZipFile(result, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                data = data.replace(b"<w:body>", b"<w:body>" + body, 1)
            target.writestr(item, data)
    return result.getvalue()


def repeated_spine_epub(folder: Path, repeats: int) -> bytes:
    """An e-book of one 80 KB chapter whose spine lists it `repeats` times (2 KB zipped)."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("ctxsearch-repeated-spine")
    book.set_title("Once")
    book.set_language("en")
    chapter = epub.EpubHtml(title="One", file_name="one.xhtml", lang="en")
    chapter.content = f"<html><body><h1>One</h1><p>{WORDS * 4_500}</p></body></html>"
    book.add_item(chapter)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = [chapter] * repeats
    path = folder / "once.epub"
    epub.write_epub(str(path), book)
    return path.read_bytes()


def test_a_chapter_the_spine_lists_many_times_is_read_once(tmp_path):
    # 300 x 81 KB: 24 M characters if each listing were read, past the cap
    text = read_epub(repeated_spine_epub(tmp_path, repeats=300))
    assert len(text) < 100_000 and text.count("# One") == 1


def test_text_past_the_cap_is_the_files_failure():
    paragraph = b"<w:p><w:r><w:t>" + WORDS.encode() * 58_255 + b"</w:t></w:r></w:p>"  # 1 MiB
    data = docx_with_body(paragraph * (MAX_TEXT_CHARACTERS // 1_048_590 + 1))  # 90 KB
    assert MAX_TEXT_CHARACTERS == 20_971_520
    with pytest.raises(UnreadableFile, match="over the limit of 20,971,520 characters"):
        read_docx(data)


def test_a_docx_of_more_paragraphs_than_the_budget_is_its_failure():
    data = docx_with_body(b"<w:p/>" * (MAX_PARTS + 1))  # 40 KB of empty paragraphs
    with pytest.raises(UnreadableFile, match="over 200,000 parts"):
        read_docx(data)


def test_headings_are_found_when_each_style_is_resolved_once():
    import docx

    document = docx.Document()
    for number in range(50):
        document.add_heading(f"Part {number}", 1 + number % 3)
        document.add_paragraph(f"Body {number}.")
        document.add_paragraph("")
    out = io.BytesIO()
    document.save(out)
    lines = read_docx(out.getvalue()).split("\n\n")
    assert lines[:4] == ["# Part 0", "Body 0.", "## Part 1", "Body 1."]
    assert lines[-2:] == ["## Part 49", "Body 49."] and len(lines) == 100


def sample_files(tmp_path: Path) -> dict:
    """A small real file of each kind whose reader counts its work, with that reader."""
    return {
        "docx": (read_docx, make_docx()),
        "pptx": (read_pptx, make_pptx()),
        "odt": (read_odt, make_odt()),
        "epub": (read_epub, make_epub(tmp_path)),
        "pdf": (read_pdf, make_pdf(["Cranes migrate in autumn.", "They fly south."])),
    }


@pytest.mark.parametrize("kind", ["docx", "pptx", "odt", "epub", "pdf"])
@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        (ReadingLimits(characters=5), "'s text is over the limit of 5 characters"),
        (ReadingLimits(parts=0), " has over 0 parts"),
        (ReadingLimits(seconds=0), " took over 0 s"),  # the clock is checked at each part
    ],
    ids=["text", "parts", "time"],
)
def test_each_reader_stops_at_each_limit_as_the_files_failure(tmp_path, kind, limits, reason):
    reader, data = sample_files(tmp_path)[kind]
    assert reader(data)  # within the default limits
    with pytest.raises(UnreadableFile, match=f"{kind.upper()}{reason}"):
        reader(data, limits=limits)


def test_an_ebook_stops_at_the_chapter_that_passes_the_text_limit(tmp_path):
    data = repeated_spine_epub(tmp_path, repeats=1)  # one chapter of 81,006 characters
    assert len(read_epub(data, limits=ReadingLimits(characters=81_006)))
    with pytest.raises(UnreadableFile, match="EPUB's text is over the limit of 81,005"):
        read_epub(data, limits=ReadingLimits(characters=81_005))


def test_a_text_file_read_past_the_size_cap_still_has_the_text_limit(tmp_path):
    path = tmp_path / "huge.txt"
    path.write_text("a" * (MAX_TEXT_CHARACTERS + 1))
    source = SourceFile(path, path.stat().st_size, path.stat().st_mtime_ns)
    with pytest.raises(UnreadableFile, match="TXT's text is over the limit"):
        read_document(source, max_bytes=2 * MAX_TEXT_CHARACTERS)


def test_a_file_over_a_limit_fails_and_its_indexed_version_is_removed(tmp_path, tiny_model_dir):
    """Passing a limit of what reading makes is the file's content's doing (the same bytes
    always pass it): a fresh index would hold nothing of it, so neither does this one."""
    docs, index = tmp_path / "docs", tmp_path / "ix"
    docs.mkdir()
    (docs / "cranes.docx").write_bytes(make_docx())
    runner = CliRunner()
    command = ["index", str(docs), "--index", str(index), "--model", str(tiny_model_dir)]
    assert runner.invoke(cli, [*command, "--quiet"]).exit_code == 0
    assert found(index, "counterweights") == ["cranes.docx"]
    (docs / "cranes.docx").write_bytes(docx_with_body(b"<w:p/>" * (MAX_PARTS + 1)))
    result = runner.invoke(cli, [*command, "--json"])
    assert result.exit_code == 4, result.output
    assert json.loads(result.stdout)["failed"] == 1
    failure = [line for line in result.stderr.splitlines() if "cranes.docx" in line]
    assert len(failure) == 1 and "over 200,000 parts" in failure[0], result.stderr
    assert failure[0].endswith("; its indexed version is removed")
    assert json.loads(result.stdout)["removed"] == 1
    assert found(index, "counterweights") == []
