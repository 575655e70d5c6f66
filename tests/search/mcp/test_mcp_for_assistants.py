"""What an assistant reads over MCP (stdio, the SDK's client): compact `search` and
`similar` answers by default and every key with `detail: "full"`, `explain`, a PDF read
page by page to its end, a document read past its first 100,000 characters, and a hint
for a path glob that matches nothing."""

from __future__ import annotations

import io

import anyio
import pytest

from indexer import Indexer
from search.documents import load_document
from search.engine import Searcher
from search.mcp_server.compact import HIT_KEYS
from tests.conftest import make_pdf
from tests.support.mcp_client import stdio_session

PAGES = [
    [f"Page {page} line {line}: the cranes of the marsh rest here." for line in range(30)]
    for page in (1, 2, 3)
]


def run(test) -> None:
    anyio.run(test)


def _pdf(pages: list[list[str]]) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for lines in pages:
        writer.add_page(PdfReader(io.BytesIO(make_pdf(lines))).pages[0])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _stored_text(index, path: str) -> str:
    with Searcher(index) as searcher, searcher.store.snapshot([]) as snapshot:
        return load_document(snapshot, snapshot.documents_at(path)[0].id).text


@pytest.fixture(scope="module")
def paged_index(tmp_path_factory):
    """A three-page PDF, a text of 230,000 characters and a note, with the test encoder."""
    from indexer.encoders.hashed import HASHED_MODEL

    base = tmp_path_factory.mktemp("paged")
    folder = base / "docs"
    folder.mkdir()
    (folder / "marsh.pdf").write_bytes(_pdf(PAGES))
    (folder / "long.txt").write_text(
        "".join(f"Line {n}: the long ledger of the weir keeps counting.\n" for n in range(4300))
    )
    (folder / "note.md").write_text("# Note\n\nOtters float on their backs.\n")
    index = base / "ix"
    Indexer(index, model=HASHED_MODEL).index_folder(folder)
    return index, folder


def test_search_answers_compactly_unless_asked_for_every_key(sample_index):
    async def session_test() -> None:
        async with stdio_session(sample_index) as session:
            asked = {"query": "how do I keep a cast iron pan from rusting", "k": 10}
            small_answer = await session.call_tool("search", asked)
            full_answer = await session.call_tool("search", {**asked, "detail": "full"})
            compact, full = small_answer.structured_content, full_answer.structured_content
            assert set(compact) == {"query", "mode", "results"}
            assert {"timings", "query_encoder"} <= set(full)
            for small, whole in zip(compact["results"], full["results"], strict=True):
                assert set(small) <= set(HIT_KEYS)
                assert {"path", "line", "end_line", "snippet", "match", "chunk_id"} <= set(small)
                assert not {"start", "end", "highlights", "found_by", "score"} & set(small)
                assert {"start", "end", "highlights", "found_by", "score"} <= set(whole)
                assert (small["path"], small["line"], small["snippet"]) == (
                    whole["path"],
                    whole["line"],
                    whole["snippet"],
                )
                assert small.get("section") == (whole["section"] or whole["heading"])
            # what the model reads: the text content, less than 60% of the full answer's
            compact_bytes = len(small_answer.content[0].text.encode())
            assert compact_bytes < 0.6 * len(full_answer.content[0].text.encode())

            near = (
                await session.call_tool("similar", {"path": compact["results"][0]["path"]})
            ).structured_content
            assert "chunk_ids" not in near["item"] and near["item"]["passages"] >= 1
            assert all(set(hit) <= set(HIT_KEYS) for hit in near["results"])
            whole_item = await session.call_tool(
                "similar", {"path": compact["results"][0]["path"], "detail": "full"}
            )
            assert whole_item.structured_content["item"]["chunk_ids"]

            explained = await session.call_tool(
                "search", {"query": "savings account interest", "k": 2, "explain": True}
            )
            hits = explained.structured_content["results"]
            assert all({"sides", "fusion", "terms", "words"} <= set(h["explain"]) for h in hits)
            bad = await session.call_tool("search", {"query": "bank", "detail": "everything"})
            assert bad.is_error and "detail: Input should be 'compact' or 'full'" in (
                bad.content[0].text
            )

    run(session_test)


def test_a_pdf_is_read_page_by_page_to_its_end(paged_index):
    index, folder = paged_index
    pdf = str(folder / "marsh.pdf")
    whole = _stored_text(index, pdf)
    read: list[dict] = []

    async def session_test() -> None:
        async with stdio_session(index) as session:
            arguments: dict = {"path": pdf, "page": 1}
            while True:
                answer = await session.call_tool("read", arguments)
                assert not answer.is_error, answer.content[0].text
                read.append(answer.structured_content)
                assert len(read) < 20, "paging does not end"
                if read[-1]["truncated"]:
                    arguments = {**arguments, "start": read[-1]["next_start"]}
                elif read[-1]["next_page"] is not None:
                    arguments = {"path": pdf, "page": read[-1]["next_page"]}
                else:
                    break
            first = (await session.call_tool("read", {"path": pdf})).structured_content
            assert first["pages"] == 3 and first["page"] == 1
            cut = await session.call_tool("read", {"path": pdf, "page": 2, "max_chars": 500})
            assert cut.structured_content["truncated"] and cut.structured_content["page"] == 2
            for arguments, message in [
                ({"path": pdf, "page": 4}, "page 4 is past its last page with text (3)"),
                ({"path": pdf, "page": 1, "start_line": 2}, "give page or start_line/end_line"),
                ({"path": pdf, "page": 2, "start": 0}, "start 0 is not on page 2"),
                ({"path": str(folder / "note.md"), "page": 1}, "only a PDF is read by page"),
            ]:
                refused = await session.call_tool("read", arguments)
                assert refused.is_error and message in refused.content[0].text, arguments

    run(session_test)
    assert [page["page"] for page in read] == [1, 2, 3]
    assert [page["next_page"] for page in read] == [2, 3, None]
    assert "".join(page["text"] for page in read) == whole
    for number, page in enumerate(read, start=1):
        assert f"Page {number} line 0:" in page["text"]
        assert f"Page {number} line 29:" in page["text"]
        assert f"Page {number + 1} line" not in page["text"]


def test_a_document_is_read_past_its_first_100000_characters(paged_index):
    index, folder = paged_index
    path = str(folder / "long.txt")
    read: list[dict] = []

    async def session_test() -> None:
        async with stdio_session(index) as session:
            arguments: dict = {"path": path, "max_chars": 100_000}
            while True:
                read.append((await session.call_tool("read", arguments)).structured_content)
                if not read[-1]["truncated"]:
                    break
                arguments = {**arguments, "start": read[-1]["next_start"]}

    run(session_test)
    assert len(read) == 3 and read[-1]["end"] > 200_000
    assert "".join(page["text"] for page in read) == _stored_text(index, path)


def test_a_path_glob_that_matches_nothing_gets_a_hint(paged_index):
    index, _folder = paged_index

    async def session_test() -> None:
        async with stdio_session(index) as session:
            found = await session.call_tool("search", {"query": "otters", "path_glob": ["docs/"]})
            assert found.structured_content["results"] == []
            assert found.structured_content["hints"] == [
                "no indexed path matches the glob docs/ (without a / it matches file names, "
                "with one the end of the path; * also crosses folders); docs/* matches"
            ]

    run(session_test)
