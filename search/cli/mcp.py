"""`ctxsearch mcp`: the index as tools for AI assistants (Model Context Protocol)."""

from __future__ import annotations

import sys
import threading
import time

import click

from indexer.store.base import Target
from search.cli.common import BadInputError, index_option, translate_errors
from search.cli.serve import TOKEN_ENV, check_token
from search.paths import display_path

DEFAULT_PORT = 8766


@click.command()
@index_option
@click.option(
    "--http",
    "over_http",
    is_flag=True,
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.",
)
@click.option(
    "--host",
    default=None,
    help="With --http: the address to bind [default: 127.0.0.1]. Anything but loopback "
    "needs --token.",
)
@click.option(
    "--port",
    default=None,
    type=click.IntRange(0, 65535),
    help=f"With --http: the port [default: {DEFAULT_PORT}].",
)
@click.option(
    "--token",
    envvar=TOKEN_ENV,
    default=None,
    help=f"With --http: the bearer token every request must carry [${TOKEN_ENV}].",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME[:PORT]",
    help="With --http: also answer requests for this Host name (repeat); other names are "
    "refused (DNS rebinding), as by serve.",
)
@click.option(
    "--writable",
    is_flag=True,
    help="Also offer the tools upsert_records and delete_records (off by default).",
)
@translate_errors
def mcp(
    target: Target,
    over_http: bool,
    host: str | None,
    port: int | None,
    token: str | None,
    allowed_hosts: tuple[str, ...],
    writable: bool,
) -> None:
    """Serve the index to AI assistants as MCP tools (Model Context Protocol).

    \b
    Tools: search (query, mode, k and every filter), read (a document's lines or a
    passage), similar (more like a document or passage), folders (the indexed roots),
    and with --writable upsert_records and delete_records.

    \b
    By default the server speaks MCP over stdin and stdout, the way desktop assistants
    start local tools: register the command line `ctxsearch mcp --index FOLDER` in the
    assistant's settings (see docs/mcp.md). With --http it serves streamable HTTP at
    /mcp on 127.0.0.1, with the Host, Origin and token rules of `ctxsearch serve`.

    \b
    Examples:
      ctxsearch mcp --index ~/notes.idx
      ctxsearch mcp --index app.idx --writable
      ctxsearch mcp --index ~/notes.idx --http --port 8766
      ctxsearch mcp --index docs.idx --http --host 0.0.0.0 --token "$(openssl rand -hex 16)"
    """
    from search.server.app import is_loopback
    from search.server.guard import AllowedHosts, BadHostName

    token = check_token(token or None)
    if not over_http:
        given = [name for name, value in _http_options(host, port, token, allowed_hosts) if value]
        if given:
            raise click.UsageError(f"{', '.join(given)} only go with --http")
    host = host or "127.0.0.1"
    port = DEFAULT_PORT if port is None else port
    if over_http and token is None and not is_loopback(host):
        raise click.UsageError(
            f"--host {host} can be reached from other machines: give --token "
            f"(or set ${TOKEN_ENV}) so that only clients holding it get answers"
        )
    if over_http:
        try:
            AllowedHosts.for_server(host, port, allowed_hosts)
        except BadHostName as error:
            raise BadInputError(str(error)) from error
    _serve(target, over_http, host, port, token, allowed_hosts, writable)


def _http_options(
    host: str | None, port: int | None, token: str | None, allowed_hosts: tuple[str, ...]
) -> list[tuple[str, object]]:
    return [
        ("--host", host),
        ("--port", port is not None),
        ("--token", token),
        ("--allowed-host", allowed_hosts),
    ]


def _serve(
    target: Target,
    over_http: bool,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: tuple[str, ...],
    writable: bool,
) -> None:
    from indexer.encoders.query import query_encoder_choice
    from search.engine import Searcher
    from search.mcp_server.tools import build_server
    from search.server.app import listen
    from search.server.guard import AllowedHosts

    # As `serve --writable`: writes need the torch model, and searches share it.
    query_encoder = query_encoder_choice()
    if writable and query_encoder == "auto":
        query_encoder = "torch"
    with Searcher(target, query_encoder=query_encoder) as searcher:
        started = time.perf_counter()
        listener = listen(host, port) if over_http else None
        server = build_server(searcher, target if writable else None)
        # The model loads beside the handshake: the first search waits for it, if need be.
        threading.Thread(target=_load_model, args=(searcher,), daemon=True).start()
        where = display_path(searcher.store.target)
        if listener is None:
            _say(f"{where}: MCP over stdio" + ("; writable" if writable else ""))
            server.run("stdio")
            return
        from search.mcp_server.http import MCP_PATH, run_http

        with listener:
            bound = listener.getsockname()[1]
            shown = f"[{host}]" if ":" in host else host
            _say(
                f"{where}: MCP over streamable HTTP at http://{shown}:{bound}{MCP_PATH}"
                + (" (bearer token required)" if token else "")
                + ("; writable" if writable else "")
                + f" (ready in {time.perf_counter() - started:.1f}s)"
            )
            hosts = AllowedHosts.for_server(shown, bound, allowed_hosts)
            run_http(server, listener, hosts, token, writable)


def _load_model(searcher) -> None:  # searcher: Searcher
    try:
        searcher.encoders()
    except Exception as error:  # the first search reports it to the assistant
        _say(f"the model did not load yet: {error}")


def _say(message: str) -> None:
    # stderr: over stdio, stdout carries the protocol
    print(f"ctxsearch: {message}", file=sys.stderr, flush=True)
