"""`ctxsearch mcp` over stdio (issue 27 item 1), driven by the MCP SDK's stdio client:
the handshake, the tools and their schemas, each tool called, bad arguments as tool
errors, and the write tools only with --writable."""

from __future__ import annotations

import anyio

from indexer.runs.indexer import Indexer
from tests.conftest import SAMPLE_CORPUS
from tests.support.mcp_client import stdio_session

READ_TOOLS = {"search", "read", "similar", "folders"}
SAVINGS = str(SAMPLE_CORPUS / "finance" / "savings-accounts.md")
BRANCH = str(SAMPLE_CORPUS / "finance" / "bank-branch-services.html")


def run(test) -> None:
    anyio.run(test)


def test_each_tool_answers_over_stdio_with_what_a_hit_has(sample_index):
    async def session_test() -> None:
        async with stdio_session(sample_index) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(tools) == READ_TOOLS, "no write tools without --writable"
            search_schema = tools["search"].input_schema
            assert search_schema["required"] == ["query"]
            for name in ("mode", "k", "under", "path_glob", "type", "where", "min_similarity"):
                assert search_schema["properties"][name]["description"], name
            assert all(tool.description for tool in tools.values())

            found = await session.call_tool("search", {"query": "open a savings account", "k": 3})
            assert not found.is_error
            hits = found.structured_content["results"]
            assert len(hits) == 3 and hits[0]["path"] == SAVINGS
            assert {"path", "line", "end_line", "section", "snippet", "similarity", "match"} <= set(
                hits[0]
            )
            assert hits[0]["match"] == "strong"
            top = hits[0]

            lines = {"path": top["path"], "start_line": top["line"], "end_line": top["end_line"]}
            read = (await session.call_tool("read", lines)).structured_content
            assert read["line"] == top["line"] and read["end_line"] == top["end_line"]
            assert read["text"].startswith("# Opening a Savings Account")
            # HTML: a hit's lines are the file's; read gives the passages covering them
            branch = {"path": BRANCH, "start_line": 3, "end_line": 27}
            html = (await session.call_tool("read", branch)).structured_content
            assert html["text"].startswith("What You Can Do at a Bank Branch")
            # the first passage starts at the <title>, on line 5
            assert "<" not in html["text"] and (html["line"], html["end_line"]) == (5, 27)
            passage = await session.call_tool("read", {"chunk_id": top["chunk_id"]})
            assert passage.structured_content["text"].startswith("# Opening a Savings Account")
            assert passage.structured_content["line"] == top["line"]

            near = (
                await session.call_tool("similar", {"path": top["path"], "k": 3})
            ).structured_content
            assert near["item"]["vector"] == "document mean" and len(near["results"]) == 3
            assert all(hit["path"] != top["path"] for hit in near["results"])
            by_line = await session.call_tool(
                "similar", {"path": top["path"], "line": top["line"], "mode": "static"}
            )
            assert by_line.structured_content["item"]["vector"] == "passage"

            folders = (await session.call_tool("folders", {})).structured_content
            assert folders["folders"][0]["root"] == str(SAMPLE_CORPUS)
            assert folders["documents"] == folders["folders"][0]["documents"]

            filtered = await session.call_tool(
                "search", {"query": "bank", "type": ["md"], "path_glob": ["finance/*"], "k": 10}
            )
            assert {h["path"][-3:] for h in filtered.structured_content["results"]} == {".md"}

    run(session_test)


def test_bad_arguments_are_tool_errors_and_the_server_keeps_answering(sample_index):
    bad_calls = [
        ("search", {"query": ""}, "bad arguments for search: query: String should have at"),
        ("search", {"query": "bank", "k": 0}, "k: Input should be greater than or equal to 1"),
        ("search", {"query": "bank", "mode": "magic"}, "mode: Input should be 'hybrid', "),
        ("search", {"query": "bank", "min_similarity": 3}, "min_similarity: Input should be"),
        ("search", {"k": 3}, "bad arguments for search: query: Field required"),
        ("read", {}, "give either path"),
        ("read", {"path": "/no/such.md"}, "no such document in the index"),
        ("read", {"path": SAVINGS, "start_line": 10_000}, "past its last line"),
        ("read", {"path": SAVINGS, "start": 10**9}, "is past the end of its text"),
        ("read", {"path": SAVINGS, "start_line": 2, "start": 0}, "give start_line or start"),
        ("read", {"chunk_id": 10**12}, "no passage with chunk_id"),
        ("similar", {"path": "/no/such.md"}, "no such document in the index"),
        ("similar", {"path": SAVINGS, "line": 10_000}, "past the end of its text"),
        ("similar", {"chunk_id": "seven"}, "similar: chunk_id: Input should be a valid integer"),
        ("upsert_records", {"records": [{"id": "a", "text": "b"}]}, "Unknown tool"),
        # a filter under a name the tool does not take would widen the scope: refused
        (
            "search",
            {"query": "bank", "file_type": ["md"], "path": ["nothing/*"]},
            "bad arguments for search: unknown argument(s) file_type, path (it takes ",
        ),
        ("similar", {"path": SAVINGS, "tenant": "x"}, "unknown argument(s) tenant"),
        ("read", {"path": SAVINGS, "page": 2}, "only a PDF is read by page"),
        ("read", {"path": SAVINGS, "pages": 2}, "for read: unknown argument(s) pages"),
    ]

    async def session_test() -> None:
        async with stdio_session(sample_index) as session:
            for name, arguments, message in bad_calls:
                answer = await session.call_tool(name, arguments)
                assert answer.is_error, (name, arguments)
                text = answer.content[0].text
                assert message in text and "\n" not in text, text
            still = await session.call_tool("search", {"query": "bank", "k": 1})
            assert not still.is_error

    run(session_test)


def test_records_are_written_only_with_writable(tmp_path, tiny_model_dir):
    index = tmp_path / "app.idx"
    Indexer(index, model=str(tiny_model_dir)).upsert_records(
        [{"id": "faq-1", "text": "Refunds take five days.", "metadata": {"lang": "en"}}]
    )

    async def session_test() -> None:
        async with stdio_session(index) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert names == READ_TOOLS
        async with stdio_session(index, "--writable") as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert names == READ_TOOLS | {"upsert_records", "delete_records"}
            record = {"id": "faq-2", "text": "Shipping is free.", "metadata": {"lang": "de"}}
            written = await session.call_tool("upsert_records", {"records": [record]})
            assert not written.is_error, written.content[0].text
            assert written.structured_content["added"] == 1
            found = await session.call_tool(
                "search", {"query": "shipping", "where": {"lang": "de"}, "k": 5}
            )
            assert [h["id"] for h in found.structured_content["results"]] == ["faq-2"]
            bad = await session.call_tool("upsert_records", {"records": [{"id": "x"}]})
            assert bad.is_error and "record 1" in bad.content[0].text
            gone = await session.call_tool("delete_records", {"ids": ["faq-2", "nope"]})
            assert gone.structured_content["deleted"] == 1
            assert gone.structured_content["not_found"] == ["nope"]

    run(session_test)
