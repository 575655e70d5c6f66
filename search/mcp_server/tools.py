"""The MCP tools over one index: search, read, similar, folders, and with `writable`
upsert_records and delete_records.

Each tool is a thin call into the library (`Searcher.search`, `Searcher.similar`,
`search.mcp_server.read_tool`, `Indexer.upsert_records`). `search` and `similar` answer
compactly by default, what a model needs to cite and decide
(`search.mcp_server.compact`); with `detail: "full"`, the JSON the command line prints
(`query --json`, `similar --json`), every key a hit has. The SDK builds each tool's
input schema from the annotated parameters below: their descriptions are what a model
reads. The search parameters of `search` and
`similar` are the request's (`search.mcp_server.search_arguments`), described as for the
command line and HTTP. A library error (an unknown path, a bad
filter) and arguments that fail the schema both come back as a tool error (`isError`,
one line of text), never as a failure of the server. The write tools go through the
writer `serve --writable` uses (`search.server.record_writer`): one write at a time, a
bounded queue, and searches that never wait for writes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from indexer.errors import CtxsearchError
from indexer.store.base import Target
from indexer.version import __version__
from search.engine import Searcher
from search.limits import MAX_DOCUMENT_ID
from search.mcp_server.argument_errors import one_line_argument_errors, refusing_unknown_arguments
from search.mcp_server.compact import (
    DEFAULT_DETAIL,
    DETAIL_HELP,
    DETAILS,
    compact_search,
    compact_similar,
)
from search.mcp_server.read_tool import DEFAULT_READ_CHARS, MAX_READ_CHARS, read_document
from search.mcp_server.read_tool import read_passage as read_chunk
from search.mcp_server.search_arguments import request_keywords, with_request_parameters
from search.request import parameters, similar_parameters
from search.similar import SIMILAR_MODES

F = TypeVar("F", bound=Callable[..., Any])
A = TypeVar("A", bound=Callable[..., Awaitable[Any]])
Detail = Literal[DETAILS]  # type: ignore[valid-type]

INSTRUCTIONS = (
    "Semantic search over a local index of the user's documents (ctxsearch). Use `search` "
    "with a natural-language question, or with the name of what is wanted (put an exact "
    "name or phrase in double quotes to require it; -word excludes); each hit gives path, "
    "line, section, snippet, "
    "similarity (the contextual cosine) and match: strong (it likely answers the question; "
    "read it before quoting it), weak (on the topic at most: it may hold part of an answer "
    "or only be near it; read it before relying on it), none (nothing suggests it does, "
    "and every hit of a query of stop words only; say so rather than rely on it). Use "
    "`read` with a hit's path and line range (a PDF's page; or its chunk_id) to see the full "
    "text, `similar` to find documents like one you found, `folders` to see what is indexed."
)

# The request's parameters each search tool takes (`search.mcp_server.search_arguments`).
SEARCH = tuple(parameters())
SIMILAR = tuple(similar_parameters())


def tool_errors(tool: F) -> F:
    """The tool with the library's errors turned into tool errors (their one line)."""

    @wraps(tool)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return tool(*args, **kwargs)
        except CtxsearchError as error:
            raise ToolError(str(error)) from error

    return wrapper  # type: ignore[return-value]


def async_tool_errors(tool: A) -> A:
    """`tool_errors` for a tool that is a coroutine function."""

    @wraps(tool)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await tool(*args, **kwargs)
        except CtxsearchError as error:
            raise ToolError(str(error)) from error

    return wrapper  # type: ignore[return-value]


def build_server(searcher: Searcher, writable: Target | None = None) -> MCPServer:
    """The MCP server answering for `searcher`; with `writable` (the index's target),
    also the tools that upsert and delete records there."""
    server = MCPServer(
        "ctxsearch",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        middleware=[one_line_argument_errors],
    )
    reading = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @tool_errors
    @with_request_parameters(SEARCH)
    def search(
        detail: Annotated[Detail, Field(description=DETAIL_HELP)] = DEFAULT_DETAIL,
        **options: Any,
    ) -> dict[str, Any]:
        """Search the indexed documents for passages that answer `query`, best first.

        Returns {query, mode, results: [{rank, path, line, end_line, match_line, section,
        snippet, match, similarity, chunk_id}], hints}: `line`/`end_line` are the
        passage's 1-based lines in the file (a PDF gives `page` instead), `match_line` the
        line that matches best; `match` says how well the hit answers (`strong`: likely;
        `weak`: on the topic at most, read it before relying on it; `none`: no good
        match), `similarity` is the contextual cosine (comparable across queries). Empty
        values are left out. In `query`, "a phrase" in double quotes must be in the
        passage and -word (or -"a phrase") must not. Read a hit in full with `read`. With
        no results, `hints` says which filter value matches nothing in the index, and
        what is there. While a run is still encoding the newest passages' contextual
        vectors, `completeness` says how many of the `passages` have them
        (`contextual_passages`); the others are found by their words until then.
        `detail: "full"` adds offsets, highlights, scores and timings; `explain: true`
        says why each hit ranks (slower).
        """
        request = request_keywords(options, SEARCH)
        found = searcher.search(request.pop("query"), **request).to_dict()
        return found if detail == "full" else compact_search(found)

    @tool_errors
    def read(
        path: Annotated[
            str | None,
            Field(
                min_length=1,
                description="A document's path exactly as a hit shows it (or record:ID "
                "for a record). Give this or chunk_id.",
            ),
        ] = None,
        chunk_id: Annotated[
            int | None,
            Field(ge=1, le=MAX_DOCUMENT_ID, description="One passage, by a hit's chunk_id."),
        ] = None,
        start_line: Annotated[
            int | None,
            Field(ge=1, description="With path: the first line to return (default 1)."),
        ] = None,
        end_line: Annotated[
            int | None,
            Field(ge=1, description="With path: the last line to return (default: the end)."),
        ] = None,
        max_chars: Annotated[
            int,
            Field(
                ge=1,
                le=MAX_READ_CHARS,
                description=f"With path: at most this many characters (default "
                f"{DEFAULT_READ_CHARS:,}). When the text asked for is longer, `truncated` "
                "is true and `next_start` says where the rest begins: call again with "
                "start = next_start (and the same end_line) until truncated is false.",
            ),
        ] = DEFAULT_READ_CHARS,
        start: Annotated[
            int | None,
            Field(
                ge=0,
                description="With path, instead of start_line: read from this character "
                "of the document's text: the `next_start` of the answer before (to read "
                "on), or a hit's `start`.",
            ),
        ] = None,
        page: Annotated[
            int | None,
            Field(
                ge=1,
                description="With the path of a PDF, instead of start_line/end_line: read "
                "this page (1-based; a hit's `page`); `next_page` in the answer is the "
                "next one with text. A page longer than max_chars reads on with start = "
                "next_start and the same page.",
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Read a document's text a page at a time, or one passage by chunk_id.

        With path: {path, document_id, line, end_line, total_lines, truncated, text,
        start, end, next_start} (the text the index holds: a text, Markdown or code
        file's own lines, so a hit's line and end_line select its passage; `start` and
        `end` are the page's character offsets in that text). Read on with
        start = next_start while truncated: the pages put together are the whole text,
        however long. A PDF's answer also has `pages` (its last page with text) and
        `page`; with page: that page alone, and `next_page`.
        With chunk_id: {path, chunk_id, line, end_line, heading, page, text} of that
        passage.
        """
        if (path is None) == (chunk_id is None):
            raise ToolError("give either path (a document) or chunk_id (a passage)")
        if chunk_id is not None:
            return read_chunk(searcher, chunk_id)
        assert path is not None
        return read_document(searcher, path, start_line, end_line, max_chars, start, page)

    @tool_errors
    @with_request_parameters(SIMILAR)
    def similar(
        path: Annotated[
            str | None,
            Field(
                min_length=1,
                description="The document to find more like: its path exactly as a hit "
                "shows it (or record:ID). Give this or chunk_id.",
            ),
        ] = None,
        line: Annotated[
            int | None,
            Field(
                ge=1,
                description="With path: use only the passage at this 1-based line "
                "(default: the whole document).",
            ),
        ] = None,
        chunk_id: Annotated[
            int | None,
            Field(
                ge=1,
                le=MAX_DOCUMENT_ID,
                description="A passage to find more like, by a hit's chunk_id.",
            ),
        ] = None,
        mode: Annotated[
            Literal[SIMILAR_MODES],  # type: ignore[valid-type]
            Field(description="contextual (default): by meaning; static: by word vectors."),
        ] = "contextual",
        detail: Annotated[Detail, Field(description=DETAIL_HELP)] = DEFAULT_DETAIL,
        **options: Any,
    ) -> dict[str, Any]:
        """Find the documents most like one already in the index (more like this).

        A whole document is compared by the mean of its passages' stored vectors, a
        passage (path and line, or chunk_id) by its own; nothing is re-encoded. The
        item's own document and its copies (files with the same text, listed in
        item.duplicates) are left out. Returns {item: {path, vector, passages,
        duplicates, ...}, mode, results: [hits as `search` gives them]}; with
        `detail: "full"`, the item's chunk_ids too.
        """
        found = searcher.similar(
            path,
            line=line,
            chunk_id=chunk_id,
            mode=mode,
            **request_keywords(options, SIMILAR),
        ).to_dict()
        return found if detail == "full" else compact_similar(found)

    @tool_errors
    def folders() -> dict[str, Any]:
        """The folders indexed (roots), each with its documents and passages ("chunks";
        "contextual_passages": those with contextual vectors, all but while a run fills
        them), and the index's totals (records: texts stored by applications, which
        belong to no folder; completeness: how many passages have contextual vectors);
        give a root as `under` to search inside it."""
        description = searcher.store.describe()
        keys = ("documents", "chunks", "records", "completeness")
        return {
            "folders": description.get("folders", []),
            **{key: description.get(key) for key in keys},
        }

    server.add_tool(search, annotations=reading)
    server.add_tool(read, annotations=reading)
    server.add_tool(similar, annotations=reading)
    server.add_tool(folders, annotations=reading)
    if writable is not None:
        _add_write_tools(server, writable)
    server.middleware.append(refusing_unknown_arguments(_arguments_of_tools(server)))
    return server


def _arguments_of_tools(server: MCPServer) -> Any:
    """The names of the arguments each of `server`'s tools takes, read once."""
    known: dict[str, frozenset[str]] = {}

    async def arguments() -> dict[str, frozenset[str]]:
        if not known:
            for tool in await server.list_tools():
                known[tool.name] = frozenset(tool.input_schema.get("properties", {}))
        return known

    return arguments


def _add_write_tools(server: MCPServer, target: Target) -> None:
    from indexer.records.record import check_record_ids, check_records
    from search.server.record_writer import RecordWriter

    writer = RecordWriter(target)
    writer.load_encoders()  # the first write waits for no model

    # Async: a write waiting its turn holds none of the worker threads the read tools
    # run on, and past the queue's room it is refused at once (as in `serve`).
    @async_tool_errors
    async def upsert_records(
        records: Annotated[
            list[dict[str, Any]],
            Field(
                min_length=1,
                description='Records to add or replace, each {"id": "faq-12", "text": '
                '"Refunds take 5 days.", "metadata": {"lang": "en"}}: id and text are '
                "required strings, metadata an optional flat object of strings, numbers "
                "and booleans (searchable with `where`). A record whose id exists is "
                "replaced. All are written in one atomic change.",
            ),
        ],
    ) -> dict[str, Any]:
        """Add or replace records (an application's texts with ids and metadata) in the
        index; they are searchable once this returns. Returns what changed."""
        with writer.queue.place():
            return (await writer.upsert(lambda: check_records(records))).to_dict()

    @async_tool_errors
    async def delete_records(
        ids: Annotated[
            list[str],
            Field(min_length=1, description="The ids of the records to remove."),
        ],
    ) -> dict[str, Any]:
        """Remove records by id in one atomic change; ids no record has are listed in
        `not_found`. Files indexed from folders cannot be removed this way."""
        with writer.queue.place():
            return (await writer.delete(lambda: check_record_ids(ids))).to_dict()

    writing = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True)
    server.add_tool(upsert_records, annotations=writing)
    server.add_tool(delete_records, annotations=writing)
