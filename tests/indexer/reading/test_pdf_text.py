"""PDF text cleaned: ligatures, line-end hyphens and run-together words, on PDFs fpdf2 writes."""

import json
from pathlib import Path

import matplotlib
from click.testing import CliRunner
from fpdf import FPDF

from indexer.reading.pdf_text import join_line_end_hyphens, map_ligatures, split_run_together
from indexer.reading.readers import read_pdf
from search.cli import cli

# matplotlib (a dependency) ships DejaVu Sans, a font with the ligature glyphs.
UNICODE_FONT = Path(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf")


def typeset_pdf(lines: list[str]) -> bytes:
    """A PDF, one text line per line, in a font that has the ﬁ and ﬃ ligature glyphs."""
    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("DejaVu", "", str(UNICODE_FONT))
    pdf.set_font("DejaVu", size=11)
    for line in lines:
        pdf.cell(text=line)
        pdf.ln(6)
    return bytes(pdf.output())


GFS_LIKE = [
    "The Google \ufb01le system is a scalable distributed \ufb01le sys-",
    "tem for large distributed data-intensive applications. It is di\ufb03cult",
    "to provide fault tolerance on inexpensive commodity hardware, so the",
    "design favours high aggregate performance over a large number of",
    "clients, with data-",
    "intensive workloads in mind.",
]


def test_the_pdf_carries_ligature_characters_and_a_hyphenated_break():
    """The fixture is what the cleaning is for: the extractor's raw text has both faults."""
    from io import BytesIO

    from pypdf import PdfReader

    raw = PdfReader(BytesIO(typeset_pdf(GFS_LIKE))).pages[0].extract_text()
    assert "\ufb01le" in raw and "di\ufb03cult" in raw and "sys-\ntem" in raw


def test_ligatures_become_letters_and_line_end_hyphens_are_joined():
    text = read_pdf(typeset_pdf(GFS_LIKE))
    assert "\ufb01" not in text and "\ufb03" not in text
    assert "distributed file system\nfor large" in text
    assert "difficult" in text
    # "data-intensive" is spelt with its hyphen elsewhere in the document: the hyphen stays.
    assert "with data-intensive\nworkloads" in text
    # The text keeps its lines: the joined word moved up, the break after it.
    assert len(text.splitlines()) == len(GFS_LIKE)


def test_ligature_mapping_leaves_other_compatibility_characters_alone():
    assert map_ligatures("e\ufb00ect \ufb02ow of x² at 5™") == "effect flow of x² at 5™"


def test_hyphen_rules_on_their_own():
    assert join_line_end_hyphens("a sys-\ntem.") == "a system."
    assert join_line_end_hyphens("sys-\n   tem is") == "system\nis"
    assert join_line_end_hyphens("soft\u00ad\nhyphen") == "softhyphen"
    # A capitalised or numeric tail is a compound or a code, not a broken word.
    assert join_line_end_hyphens("Smith-\nJones and RFC-\n2616") == "Smith-\nJones and RFC-\n2616"
    # A list dash at the end of a line is not a broken word either.
    assert join_line_end_hyphens("items -\nnext") == "items -\nnext"


def test_words_drawn_without_a_space_are_split_where_layout_mode_sees_a_gap():
    """Three words drawn one by one 0.5 mm apart: pypdf's plain mode runs them together."""
    from io import BytesIO

    from pypdf import PdfReader

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    x = 20.0
    for word in ("The", "file", "system"):
        pdf.text(x, 40, word)
        x += pdf.get_string_width(word) + 0.5
    data = bytes(pdf.output())
    assert PdfReader(BytesIO(data)).pages[0].extract_text() == "Thefilesystem"
    assert read_pdf(data) == "The filesystem"


def test_run_together_split_is_conservative():
    layout = "The   file  system   of  record"
    assert split_run_together("Thefile system of record", layout) == "The file system of record"
    # A token the layout text also has whole is never split, even if its parts exist.
    assert split_run_together("record of file", "record of file re cord") == "record of file"
    # Punctuation drawn apart from its word stays attached to it.
    assert split_run_together("the syntax.", "the syntax .") == "the syntax."


def test_a_lexical_query_finds_file_system_in_the_cleaned_pdf(tmp_path):
    """The Google File System case: "ﬁle" and "sys-\\ntem" did not match "file system"."""
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "gfs.pdf").write_bytes(typeset_pdf(GFS_LIKE))
    (papers / "cranes.txt").write_text("Cranes migrate south in autumn, in long skeins.")
    (papers / "bread.txt").write_text("Sourdough bread needs a starter, flour and patience.")
    runner = CliRunner()
    ix = str(tmp_path / "ix")
    indexed = runner.invoke(cli, ["index", str(papers), "--index", ix, "--quiet"])
    assert indexed.exit_code == 0, indexed.output
    for query in ("file system", "difficult"):
        found = runner.invoke(cli, ["query", query, "--index", ix, "--mode", "lexical", "--json"])
        assert found.exit_code == 0, found.output
        paths = [Path(hit["path"]).name for hit in json.loads(found.stdout)["results"]]
        assert paths == ["gfs.pdf"], (query, paths)
