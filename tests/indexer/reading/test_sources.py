"""Walking folders and reading each supported format."""

import pytest

from indexer.errors import SourceNotFound, UnreadableFile
from indexer.reading.readers import decode_text, read_html, read_pdf
from indexer.reading.sources import read_document, walk_folder
from tests.conftest import make_pdf


def test_walk_finds_supported_files_and_skips_hidden_git_and_binary(notes):
    found = sorted(p.path.relative_to(notes).as_posix() for p in walk_folder(notes))
    assert found == ["garden/roses.md", "money.txt", "page.html", "river.txt"]


def test_walk_refuses_a_missing_folder_and_a_file(tmp_path):
    with pytest.raises(SourceNotFound, match="no such folder"):
        list(walk_folder(tmp_path / "nowhere"))
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(SourceNotFound, match="not a folder"):
        list(walk_folder(tmp_path / "a.txt"))


def test_walk_survives_a_symlink_loop(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "note.txt").write_text("hello")
    (tmp_path / "a" / "loop").symlink_to(tmp_path / "a")
    assert [p.path.name for p in walk_folder(tmp_path)] == ["note.txt"]


def test_html_keeps_visible_text_only():
    html = (
        b"<html><head><title>The Title</title><style>.x{color:red}</style>"
        b"<script>alert('no')</script></head><body><h1>Heading</h1><!-- a comment -->"
        b"<p>First <b>bold</b> paragraph.</p><script>var hidden = 1;</script>"
        b"<noscript>enable js</noscript><p>Second.</p></body></html>"
    )
    text = read_html(html)
    assert "The Title" in text and "Heading" in text and "bold" in text and "Second." in text
    for hidden in ("color", "alert", "hidden", "a comment", "enable js"):
        assert hidden not in text


def test_sample_html_pages_leak_no_script_or_style(model):
    from tests.conftest import SAMPLE_CORPUS

    pages = list(SAMPLE_CORPUS.rglob("*.html"))
    assert pages
    for page in pages:
        text = read_html(page.read_bytes())
        assert "zzscriptmarker" not in text and "do-not-index" not in text


def test_pdf_text_layer_is_read():
    text = read_pdf(make_pdf(["Cranes migrate in autumn.", "They fly south."]))
    assert "Cranes migrate in autumn." in text and "They fly south." in text


@pytest.mark.parametrize(
    "data", [b"%PDF-1.4\n garbage", make_pdf(["truncated text"])[:200], b"not a pdf at all"]
)
def test_corrupt_pdf_raises_unreadable(data):
    with pytest.raises(UnreadableFile):
        read_pdf(data)


def test_decoding_utf8_bom_latin1_and_utf16():
    assert decode_text("\ufeffcafé".encode()) == "café"
    latin = "Le garçon a mangé une crème brûlée à la plage, très bien.".encode("latin-1")
    assert decode_text(latin) == "Le garçon a mangé une crème brûlée à la plage, très bien."
    assert decode_text("naïve text".encode("utf-16")) == "naïve text"


def test_binary_content_with_a_text_extension_is_refused():
    with pytest.raises(UnreadableFile, match="binary"):
        decode_text(b"abc\x00\x01\x02def" * 10)


def test_read_document_hashes_and_reports_oversized_files(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("hello world")
    source = next(walk_folder(tmp_path))
    document = read_document(source)
    assert document.text == "hello world" and len(document.sha256) == 64
    with pytest.raises(UnreadableFile, match="size cap"):
        read_document(source, max_bytes=5)


def test_ctxsearchignore_patterns_skip_files_and_folders(notes):
    (notes / "drafts").mkdir()
    (notes / "drafts" / "todo.md").write_text("draft")
    (notes / "data.tsv").write_text("a\tb")
    (notes / ".ctxsearchignore").write_text("# comment\ndrafts/\n*.tsv\n/page.html\n")
    found = sorted(p.path.relative_to(notes).as_posix() for p in walk_folder(notes))
    assert found == ["garden/roses.md", "money.txt", "river.txt"]


def test_the_sample_corpus_keeps_its_judgements_out_of_the_index():
    from tests.conftest import SAMPLE_CORPUS

    names = {p.path.name for p in walk_folder(SAMPLE_CORPUS)}
    assert "qrels.tsv" not in names and "queries.jsonl" not in names
    assert "questions.tsv" not in names
