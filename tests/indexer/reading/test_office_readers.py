"""Word, PowerPoint, OpenDocument and EPUB files, written by the real libraries, then read."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.errors import UnreadableFile
from indexer.reading.headings import markdown_heading
from indexer.reading.office import read_docx, read_epub, read_odt, read_pptx
from search.cli import cli


def make_docx() -> bytes:
    """python-docx: a title, two heading levels, paragraphs and a table, in that order."""
    import docx

    document = docx.Document()
    document.add_heading("Tower Cranes", 0)
    document.add_heading("Foundations", 1)
    document.add_paragraph("A tower crane stands on a concrete pad poured weeks before.")
    table = document.add_table(rows=2, cols=2)
    for row, cells in zip(table.rows, [("load", "radius"), ("6 t", "50 m")], strict=True):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    document.add_heading("Counterweights", 2)
    document.add_paragraph("Concrete blocks on the counter-jib balance the load.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_pptx() -> bytes:
    """python-pptx: a titled slide with a body, a table and notes; an untitled slide whose
    text boxes were added bottom first."""
    from pptx import Presentation
    from pptx.util import Inches

    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Migration of cranes"
    slide.placeholders[1].text = "Common cranes fly south in autumn."
    rows = slide.shapes.add_table(2, 2, Inches(1), Inches(5), Inches(4), Inches(1)).table
    rows.cell(0, 0).text, rows.cell(0, 1).text = "month", "route"
    rows.cell(1, 0).text, rows.cell(1, 1).text = "October", "Hornborga to Spain"
    slide.notes_slide.notes_text_frame.text = "Mention the Hula valley."
    blank = presentation.slides.add_slide(presentation.slide_layouts[6])
    bottom = blank.shapes.add_textbox(Inches(1), Inches(4), Inches(6), Inches(1))
    bottom.text_frame.text = "Second point, lower on the slide."
    top = blank.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(1))
    top.text_frame.text = "First point, at the top."
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def make_odt() -> bytes:
    """odfpy: outline-level headings, a paragraph, a list, a table."""
    from odf.opendocument import OpenDocumentText
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import H, List, ListItem, P

    document = OpenDocumentText()
    body = document.text
    body.addElement(H(outlinelevel=1, text="Sourdough"))
    body.addElement(P(text="A starter is flour and water left to ferment."))
    body.addElement(H(outlinelevel=2, text="Feeding"))
    steps = List()
    for step in ("Discard half.", "Add flour and water."):
        item = ListItem()
        item.addElement(P(text=step))
        steps.addElement(item)
    body.addElement(steps)
    table = Table(name="Ratios")
    table.addElement(TableColumn(numbercolumnsrepeated=2))
    for cells in (("flour", "100 g"), ("water", "100 g")):
        row = TableRow()
        for text in cells:
            cell = TableCell()
            cell.addElement(P(text=text))
            row.addElement(cell)
        table.addElement(row)
    body.addElement(table)
    out = io.BytesIO()
    document.write(out)
    return out.getvalue()


def make_epub(folder: Path) -> bytes:
    """ebooklib: two chapters, the second first in the manifest, the spine giving the order."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("ctxsearch-test-book")
    book.set_title("Rivers")
    book.set_language("en")
    first = epub.EpubHtml(title="Springs", file_name="springs.xhtml", lang="en")
    first.content = (
        "<html><body><h1>Springs</h1><p>Water rises\n   where the rock <b>folds</b>.</p>"
        "<h2>Karst</h2><p>Limestone dissolves.</p><script>var hidden = 1;</script></body></html>"
    )
    second = epub.EpubHtml(title="Deltas", file_name="deltas.xhtml", lang="en")
    second.content = "<html><body><h1>Deltas</h1><p>Silt settles at the mouth.</p></body></html>"
    book.add_item(second)
    book.add_item(first)
    book.toc = [first, second]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", first, second]
    path = folder / "rivers.epub"
    epub.write_epub(str(path), book)
    return path.read_bytes()


def test_docx_reads_in_order_with_headings_as_markdown():
    assert read_docx(make_docx()) == (
        "# Tower Cranes\n\n"
        "# Foundations\n\n"
        "A tower crane stands on a concrete pad poured weeks before.\n\n"
        "load | radius\n6 t | 50 m\n\n"
        "## Counterweights\n\n"
        "Concrete blocks on the counter-jib balance the load."
    )


def test_pptx_reads_slides_in_order_and_shapes_top_to_bottom():
    assert read_pptx(make_pptx()) == (
        "# Migration of cranes\n\n"
        "Common cranes fly south in autumn.\n\n"
        "month | route\nOctober | Hornborga to Spain\n\n"
        "Notes: Mention the Hula valley.\n\n"
        "# Slide 2\n\n"
        "First point, at the top.\n\n"
        "Second point, lower on the slide."
    )


def test_odt_reads_headings_lists_and_tables_in_order():
    assert read_odt(make_odt()) == (
        "# Sourdough\n\n"
        "A starter is flour and water left to ferment.\n\n"
        "## Feeding\n\n"
        "Discard half.\n\n"
        "Add flour and water.\n\n"
        "flour | 100 g\nwater | 100 g"
    )


def test_epub_reads_chapters_in_spine_order_without_its_contents_page(tmp_path):
    assert read_epub(make_epub(tmp_path)) == (
        "# Springs\n\n"
        "Water rises where the rock folds.\n\n"
        "## Karst\n\n"
        "Limestone dissolves.\n\n"
        "# Deltas\n\n"
        "Silt settles at the mouth."
    )


def test_heading_levels_are_clamped_and_blank_titles_dropped():
    assert markdown_heading(9, " Deep\n  title ") == "###### Deep title"
    assert markdown_heading(0, "Top") == "# Top"
    assert markdown_heading(2, "  ") == ""


def a_zip_of_other_things() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("hello.txt", "not an office file")
    return out.getvalue()


READERS = {"docx": read_docx, "pptx": read_pptx, "odt": read_odt, "epub": read_epub}


@pytest.mark.parametrize("kind", sorted(READERS))
@pytest.mark.parametrize("content", ["garbage", "truncated", "other zip"])
def test_a_corrupt_file_of_each_kind_is_a_one_line_reason(kind, content, tmp_path):
    good = {
        "docx": make_docx,
        "pptx": make_pptx,
        "odt": make_odt,
        "epub": lambda: make_epub(tmp_path),
    }[kind]()
    data = {
        "garbage": b"this is not an office file at all",
        "truncated": good[: len(good) // 2],
        "other zip": a_zip_of_other_things(),
    }[content]
    with pytest.raises(UnreadableFile, match=f"^corrupt {kind.upper()} ") as raised:
        READERS[kind](data)
    assert "\n" not in str(raised.value)


def test_a_zip_bomb_is_refused_before_it_is_unpacked():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"\0" * (300 * 1024 * 1024))
    with pytest.raises(UnreadableFile, match="would unpack to over 256 MB"):
        read_docx(out.getvalue())


def test_index_reads_each_format_and_names_each_broken_file_on_one_line(tmp_path):
    """Through `ctxsearch index`: good files indexed and found, broken ones exit 4."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cranes.docx").write_bytes(make_docx())
    (docs / "migration.pptx").write_bytes(make_pptx())
    (docs / "bread.odt").write_bytes(make_odt())
    (docs / "rivers.epub").write_bytes(make_epub(tmp_path))
    for kind in READERS:
        (docs / f"broken.{kind}").write_bytes(b"PK\x03\x04 not really a zip")
    runner = CliRunner()
    ix = str(tmp_path / "ix")
    result = runner.invoke(cli, ["index", str(docs), "--index", ix, "--quiet", "--json"])
    assert result.exit_code == 4, result.output
    assert "Traceback" not in result.output + result.stderr
    summary = json.loads(result.stdout)
    assert (summary["added"], summary["failed"]) == (4, 4)
    for kind in READERS:
        lines = [line for line in result.stderr.splitlines() if f"broken.{kind}" in line]
        assert len(lines) == 1 and f"corrupt {kind.upper()}" in lines[0], result.stderr
    for query, name in [
        ("counterweights", "cranes.docx"),
        ("Hornborga", "migration.pptx"),
        ("sourdough starter", "bread.odt"),
        ("limestone", "rivers.epub"),
    ]:
        found = runner.invoke(cli, ["query", query, "--index", ix, "--mode", "lexical", "--json"])
        results = json.loads(found.stdout)["results"]
        hits = [Path(hit["path"]).name for hit in results]
        assert hits[:1] == [name], (query, hits)
        # Headings come from the Markdown-like text; its lines are not the file's. The
        # slides are small and share one passage, which no one slide's section holds.
        assert results[0]["line"] is None, results[0]
        if name == "migration.pptx":
            assert (results[0]["heading"], results[0]["section"]) == (None, None), results[0]
        else:
            assert results[0]["heading"] and results[0]["section"], results[0]
    office = ["--index", ix, "--mode", "lexical", "--type", "office", "--json"]
    found = json.loads(runner.invoke(cli, ["query", "cranes", *office]).stdout)["results"]
    assert {Path(hit["path"]).name for hit in found} == {"cranes.docx", "migration.pptx"}
    assert json.loads(runner.invoke(cli, ["query", "limestone", *office]).stdout)["results"] == []
