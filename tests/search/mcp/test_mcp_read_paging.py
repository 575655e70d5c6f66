"""MCP `read` pages through a whole document: following what each answer says
(`next_start` while `truncated`), the pages put together are the document's text, for
HTML, Markdown with a line longer than a page, plain text and PDF. Over stdio, driven
by the SDK's client."""

from __future__ import annotations

import anyio

from indexer import Indexer
from search.documents import load_document
from search.engine import Searcher
from tests.conftest import make_pdf
from tests.support.mcp_client import stdio_session

PAGE = 1000
PARAGRAPHS = 200


def _folder(root):
    folder = root / "docs"
    folder.mkdir()
    body = "\n".join(
        f"<p>Paragraph {n} tells of herons, reeds and the slow river at dusk.</p>"
        for n in range(PARAGRAPHS)
    )
    (folder / "page.html").write_text(
        f"<!DOCTYPE html>\n<html>\n<head><title>River</title></head>\n<body>\n{body}\n"
        "</body>\n</html>\n"
    )
    long_line = " ".join(f"word{n}" for n in range(700))  # ~5,800 characters
    (folder / "long.md").write_text(
        f"# Long\n\nIntro line.\n\n{long_line}\n\nAfter the long line.\n"
    )
    (folder / "notes.txt").write_text(
        "".join(f"Line {n}: a note about otters and the weir.\n" for n in range(300))
    )
    (folder / "rules.pdf").write_bytes(
        make_pdf([f"Rule {n}: wear a helmet near the cranes." for n in range(40)])
    )
    return folder


def _stored_texts(index, paths) -> dict[str, str]:
    with Searcher(index) as searcher, searcher.store.snapshot([]) as snapshot:
        return {
            path: load_document(snapshot, snapshot.documents_at(path)[0].id).text for path in paths
        }


async def _page_through(session, path: str) -> list[dict]:
    """Every page of the document, read as the tool's schema says to continue."""
    pages = []
    arguments = {"path": path, "max_chars": PAGE}
    while True:
        answer = await session.call_tool("read", arguments)
        assert not answer.is_error, answer.content[0].text
        page = answer.structured_content
        pages.append(page)
        assert len(pages) < 1000, "paging does not end"
        if not page["truncated"]:
            return pages
        arguments = {"path": path, "max_chars": PAGE, "start": page["next_start"]}


def test_paging_as_documented_reads_every_document_whole(tmp_path, tiny_model_dir):
    folder = _folder(tmp_path)
    index = tmp_path / "ix"
    Indexer(index, model=str(tiny_model_dir)).index_folder(folder)
    paths = [str(folder / name) for name in ("page.html", "long.md", "notes.txt", "rules.pdf")]
    whole = _stored_texts(index, paths)
    read: dict[str, list[dict]] = {}

    async def session_test() -> None:
        async with stdio_session(index) as session:
            for path in paths:
                read[path] = await _page_through(session, path)

    anyio.run(session_test)
    for path in paths:
        pages = read[path]
        assert len(pages) > 1 and all(len(page["text"]) <= PAGE for page in pages), path
        assert "".join(page["text"] for page in pages) == whole[path], path
        assert [page["start"] for page in pages[1:]] == [page["end"] for page in pages[:-1]]
    html = "".join(page["text"] for page in read[paths[0]])
    assert all(f"Paragraph {n} " in html for n in range(PARAGRAPHS))
    assert [page["line"] for page in read[paths[0]]] == sorted(p["line"] for p in read[paths[0]])
    # a line longer than a page is read on from where it was cut
    long_pages = read[paths[1]]
    assert any(not page["text"].endswith("\n") for page in long_pages[:-1])
    # whole lines where they fit: each page of the notes goes on at the next line
    notes = read[paths[2]]
    assert all(page["text"].endswith("\n") for page in notes[:-1])
    assert [page["line"] for page in notes[1:]] == [page["end_line"] + 1 for page in notes[:-1]]
    assert notes[-1]["end_line"] == notes[-1]["total_lines"]
