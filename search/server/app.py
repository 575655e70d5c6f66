"""The HTTP API: a thin layer over one `Searcher`, plus the search page at `/`.

Handlers only parse requests and call the library; every answer is
the JSON the command line prints (`/search` is `ctxsearch query --json`, `/compare` is
`compare --json`, `/info` is `info --json`). Library errors become JSON with a 4xx code
(503 when the index is busy). The read endpoints are plain functions, so uvicorn runs
them in its thread pool; the shared `Searcher` runs one call at a time and reloads by
itself when `ctxsearch index` publishes a new generation. The writes (`--writable`) wait
their turn on a writer thread of their own without holding a worker of that pool, so
reads never wait for them (`search.server.write_queue`). The token, the Host and Origin
rules and the body caps are the guard's (`search.server.guard`): it answers a request
it refuses before reading its body.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Query, Request, Security
from fastapi import Path as PathParameter
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.security import HTTPBearer
from fastapi.staticfiles import StaticFiles

from indexer.errors import (
    CtxsearchError,
    DocumentNotFound,
    IndexCorrupt,
    IndexLocked,
    IndexNotFound,
    InvalidQuery,
    StoreUnavailable,
)
from indexer.version import __version__
from search.comparison import compare_modes
from search.engine import Searcher
from search.limits import MAX_BATCH_QUERIES, MAX_DOCUMENT_ID
from search.modes import MODES, Mode
from search.request import DEFAULT_K
from search.server.guard import MAX_HEAD_BYTES, AllowedHosts, RequestGuard
from search.server.record_writer import RecordWriter
from search.server.request_model import (
    SearchBatchBody,
    SearchBody,
    SearchParameters,
    query_parameter,
)
from search.server.similar_model import SimilarParameters
from search.server.writes import (
    RECORD_PATH,
    RECORDS_PATH,
    BrowserWrite,
    ReadOnlyServer,
    checked_ids,
    ids_in,
    records_in,
    refuse_browsers,
)
from search.text import json_text

STATIC = Path(__file__).parent / "static"
ModeName = Literal[MODES]  # type: ignore[valid-type]
# An index that vanished, broke or cannot be reached makes the service unavailable.
_STATUS = {
    InvalidQuery: 422,
    DocumentNotFound: 404,
    IndexLocked: 503,
    IndexNotFound: 503,
    IndexCorrupt: 503,
    StoreUnavailable: 503,
    ReadOnlyServer: 403,
    BrowserWrite: 403,
}
QueryText = query_parameter("query")
CompareCount = query_parameter("k", "How many in each list.")
_RECORDS_BODY = (
    'A list of records, or {"records": [...]}; a record is {"id": "...", "text": "...", '
    '"metadata": {"key": "value"}} (metadata flat, optional). One atomic change.'
)
_RECORDS_EXAMPLE = [{"id": "faq-12", "text": "Refunds take 5 days.", "metadata": {"lang": "en"}}]
# Checks nothing (the guard checks the token): it marks in the OpenAPI schema the
# endpoints that need it.
_BEARER = HTTPBearer(auto_error=False, description="Needed when the server has a --token.")


class SafeJSONResponse(JSONResponse):
    """JSON whose text any UTF-8 encoder accepts: a stored path that was not valid UTF-8
    (lone surrogates) is sent as \\uXXXX escapes instead of failing with a 500."""

    def render(self, content: Any) -> bytes:
        return json_text(content, allow_nan=False).encode("utf-8")


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable only from this machine (127.0.0.0/8, ::1, localhost)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def create_app(
    searcher: Searcher,
    token: str | None = None,
    hosts: AllowedHosts | None = None,
    writer: RecordWriter | None = None,
) -> FastAPI:
    """The application serving `searcher`; with `token`, every endpoint but `/health`,
    the page and the API's description needs that bearer token (compared as UTF-8).
    Only requests for `hosts` are answered (default: loopback names on any port), only
    same-origin browsers, and bodies up to `MAX_BODY_BYTES`. With `writer`
    (`serve --writable`), `POST /records` and `DELETE /records` write records into the
    index (never from a browser: see `search.server.writes`)."""
    app = FastAPI(
        title="ctxsearch",
        version=__version__,
        description="Semantic search over an index built by `ctxsearch index`.",
        default_response_class=SafeJSONResponse,
    )
    api_pages = (app.openapi_url, app.docs_url, app.swagger_ui_oauth2_redirect_url, app.redoc_url)
    app.add_middleware(
        RequestGuard,
        hosts=hosts or AllowedHosts.for_server("127.0.0.1", None),
        token=token,
        open_paths=("/health", "/", "/static/*", *(page for page in api_pages if page)),
        large_bodies=(RECORDS_PATH,) if writer is not None else (),
        write_queue=writer.queue if writer is not None else None,
    )
    guarded = [Security(_BEARER)]
    writing = [Depends(refuse_browsers), Security(_BEARER)]

    @app.exception_handler(CtxsearchError)
    def library_error(_request: Request, error: CtxsearchError) -> JSONResponse:
        return SafeJSONResponse({"detail": str(error)}, status_code=_status_of(error))

    @app.exception_handler(RequestValidationError)
    def invalid_request(_request: Request, error: RequestValidationError) -> JSONResponse:
        return SafeJSONResponse({"detail": _validation_message(error)}, status_code=422)

    @app.get("/search", dependencies=guarded, summary="Search (same JSON as query --json)")
    def search_get(parameters: Annotated[SearchParameters, Query()]) -> dict[str, Any]:
        return searcher.search(parameters.request()).to_dict()

    @app.post("/search", dependencies=guarded, summary="Search with a JSON body")
    def search_post(body: SearchBody) -> dict[str, Any]:
        return searcher.search(body.request()).to_dict()

    @app.post(
        "/search/batch",
        dependencies=guarded,
        summary=f"Up to {MAX_BATCH_QUERIES} searches in one request, encoded together",
    )
    def search_batch(body: SearchBatchBody) -> dict[str, Any]:
        answers = searcher.search_batch(body.queries, **body.options())
        return {"results": [answer.to_dict() for answer in answers]}

    @app.get("/compare", dependencies=guarded, summary="Two modes side by side (compare --json)")
    def compare(
        q: QueryText,
        k: CompareCount = DEFAULT_K,
        mode: Annotated[ModeName, Query(description="The mode compared.")] = Mode.CONTEXTUAL.value,
        against: Annotated[ModeName, Query(description="The baseline mode.")] = Mode.STATIC.value,
    ) -> dict[str, Any]:
        if mode == against:
            raise InvalidQuery("mode and against must differ")
        return compare_modes(searcher, q, k=k, mode=mode, against=against)

    @app.get("/similar", dependencies=guarded, summary="More like this (similar --json)")
    def similar(parameters: Annotated[SimilarParameters, Query()]) -> dict[str, Any]:
        return searcher.similar(**parameters.options()).to_dict()

    @app.get("/documents/{document_id}", dependencies=guarded, summary="A document's text")
    def document(
        document_id: Annotated[
            int, PathParameter(ge=1, le=MAX_DOCUMENT_ID, description="A hit's document_id.")
        ],
    ) -> dict[str, Any]:
        return searcher.document(document_id).to_dict()

    @app.get("/info", dependencies=guarded, summary="The index's manifest (info --json)")
    def info() -> dict[str, Any]:
        return searcher.store.describe()

    @app.get("/health", summary="Liveness; says whether a token is needed")
    async def health() -> dict[str, Any]:  # async: answered even when every worker is busy
        return {
            "status": "ok",
            "version": __version__,
            "auth_required": token is not None,
            "writable": writer is not None,
        }

    # The guard has given each write its place in the queue before reading its body; the
    # body is parsed and checked off the event loop.
    @app.post(
        RECORDS_PATH,
        dependencies=writing,
        summary="Upsert records (serve --writable)",
        openapi_extra=_json_body(_RECORDS_BODY, _RECORDS_EXAMPLE),
    )
    async def upsert(request: Request) -> dict[str, Any]:
        body = await request.body()
        return (await _writer(writer).upsert(lambda: records_in(body))).to_dict()

    @app.delete(
        RECORDS_PATH,
        dependencies=writing,
        summary="Delete records by id (--writable)",
        openapi_extra=_json_body('A list of ids, or {"ids": [...]}.', ["faq-12"]),
    )
    async def delete_many(request: Request) -> dict[str, Any]:
        body = await request.body()
        return (await _writer(writer).delete(lambda: ids_in(body))).to_dict()

    @app.delete(RECORD_PATH, dependencies=writing, summary="Delete one record (--writable)")
    async def delete_one(record_id: str) -> dict[str, Any]:
        summary = await _writer(writer).delete(lambda: checked_ids([record_id]))
        if summary.not_found:
            raise DocumentNotFound(f"no record with id {record_id!r} in the index")
        return summary.to_dict()

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


class AddressUnavailable(CtxsearchError):
    """The server cannot listen on the host and port asked for (in use, not ours ...)."""


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:port, opened before the model loads so that a port in
    use fails at once (`AddressUnavailable`)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        server = socket.create_server((host.strip("[]"), port), family=family)
    except OSError as error:
        reason = os.strerror(error.errno) if error.errno else str(error)
        raise AddressUnavailable(f"cannot listen on {host}:{port}: {reason}") from error
    # create_server leaves the protocol 0, and asyncio sets TCP_NODELAY only on sockets
    # whose protocol says TCP: without it, a keep-alive client waited ~40 ms on every
    # answer (Nagle's algorithm holding the body until the headers were acknowledged).
    return socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, fileno=server.detach())


def run_server(
    searcher: Searcher,
    listener: socket.socket,
    token: str | None = None,
    hosts: AllowedHosts | None = None,
    writer: RecordWriter | None = None,
) -> None:
    """Serve `searcher` with uvicorn on an open socket until interrupted."""
    serve_on_socket(create_app(searcher, token, hosts, writer), listener, "info")


def serve_on_socket(app: Any, listener: socket.socket, log_level: str) -> None:
    """Serve the ASGI `app` with uvicorn on an open socket until interrupted, with the
    guard's bound on a request's head."""
    import uvicorn

    host, port = listener.getsockname()[:2]
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
    )  # fmt: skip
    uvicorn.Server(config).run(sockets=[listener])


def _writer(writer: RecordWriter | None) -> RecordWriter:
    if writer is None:
        raise ReadOnlyServer(
            "this server is read-only: start it with `ctxsearch serve --writable` to "
            "upsert or delete records"
        )
    return writer


def _json_body(description: str, example: Any) -> dict[str, Any]:
    """The OpenAPI text of a JSON body that a handler reads itself."""
    content = {"application/json": {"schema": {}, "example": example}}
    return {"requestBody": {"required": True, "description": description, "content": content}}


def _status_of(error: CtxsearchError) -> int:
    for kind, status in _STATUS.items():
        if isinstance(error, kind):
            return status
    return 500


def _validation_message(error: RequestValidationError) -> str:
    """One line naming each bad field, e.g. `query k: Input should be greater than 0`."""
    parts = []
    for problem in error.errors():
        where = " ".join(str(part) for part in problem.get("loc", ()))
        parts.append(f"{where}: {problem.get('msg', 'invalid')}")
    return "; ".join(parts)
