"""The HTTP side's command: `serve` the index."""

from __future__ import annotations

import time

import click

from indexer import config
from indexer.store.base import Target
from search.cli.common import BadInputError, index_option, translate_errors
from search.paths import display_path
from search.server.write_queue import MAX_WAITING_WRITES

TOKEN_ENV = config.TOKEN.name


@click.command()
@index_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind. Anything but loopback needs --token.",
)
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--token",
    envvar=TOKEN_ENV,
    default=None,
    help=f"Bearer token every data request must carry [${TOKEN_ENV}].",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME[:PORT]",
    help="Also answer requests for this Host name (repeat). Loopback names and the --host "
    "address are always answered; other names are refused (DNS rebinding).",
)
@click.option(
    "--writable",
    is_flag=True,
    help="Accept writes: POST /records (upsert records) and DELETE /records (by id). "
    "Off by default. Never from a web browser; off loopback, only with --token. Writes run "
    f"one at a time beside the searches; one arriving while {MAX_WAITING_WRITES} wait gets "
    "503 with Retry-After.",
)
@translate_errors
def serve(
    target: Target,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: tuple[str, ...],
    writable: bool,
) -> None:
    """Serve the index over HTTP: a JSON API and a search page at /.

    \b
    Endpoints: GET /search?q=...&k=...&mode=... (and POST /search with a JSON body),
    GET /compare?q=..., GET /similar?item=PATH&line=N, GET /documents/{id}, GET /info,
    GET /health, and with --writable POST /records and DELETE /records[/{id}]; the OpenAPI
    schema is at /openapi.json and browsable at /docs. /search answers the JSON of
    `ctxsearch query --json`. The model loads once, at start; searches keep working
    while `ctxsearch index` updates the index, and see each update once it is published.
    With --writable, searches and writes share one loaded model, ready when serve says
    so (queries are encoded with torch then, unless $CTXSEARCH_QUERY_ENCODER is onnx).

    \b
    Requests must name this server in their Host header: 127.0.0.1, localhost, [::1],
    the --host address, or an --allowed-host name (any IP address when --host is
    0.0.0.0 or ::). Browsers may only call it from its own page (Origin is checked).

    \b
    Examples:
      ctxsearch serve --index notes.idx
      ctxsearch serve --index notes.idx --port 9000
      ctxsearch serve --index notes.idx --host 0.0.0.0 --token "$(openssl rand -hex 16)"
      ctxsearch serve --index notes.idx --allowed-host notes.home.arpa
      ctxsearch serve --index app.idx --writable
      curl -X POST http://127.0.0.1:8765/records -H 'content-type: application/json' \\
           -d '[{"id": "faq-1", "text": "Refunds take 5 days.", "metadata": {"lang": "en"}}]'

      curl 'http://127.0.0.1:8765/search?q=river+bank+erosion&k=3'
    """
    from search.server.app import is_loopback, listen, run_server
    from search.server.guard import AllowedHosts, BadHostName

    token = check_token(token or None)
    if writable and token is None and not is_loopback(host):
        raise click.UsageError(
            f"--writable on --host {host} lets other machines change the index: give "
            f"--token (or set ${TOKEN_ENV}) so that only clients holding it may write"
        )
    if token is None and not is_loopback(host):
        raise click.UsageError(
            f"--host {host} can be reached from other machines: give --token "
            f"(or set ${TOKEN_ENV}) so that only clients holding it get answers"
        )
    try:
        AllowedHosts.for_server(host, port, allowed_hosts)
    except BadHostName as error:
        raise BadInputError(str(error)) from error
    from indexer.encoders.query import query_encoder_choice
    from search.engine import Searcher
    from search.server.record_writer import RecordWriter

    writer = RecordWriter(target) if writable else None
    # Writes need the torch model: a writable server's searches use it too, rather than
    # load the torch-free export beside it (`auto` picks what is best here: that one).
    query_encoder = query_encoder_choice()
    if writer is not None and query_encoder == "auto":
        query_encoder = "torch"
    with Searcher(target, query_encoder=query_encoder) as searcher, listen(host, port) as listener:
        started = time.perf_counter()
        if writer is not None:
            writer.load_encoders()  # the first write waits for no model
        searcher.encoders()
        bound = listener.getsockname()[1]
        host = f"[{host}]" if ":" in host else host
        click.echo(
            f"ctxsearch: {display_path(searcher.store.target)}, model "
            f"{searcher.manifest.model} loaded "
            + ("for searching and writing " if writer else "")
            + f"in {time.perf_counter() - started:.1f}s; serving http://{host}:{bound}/"
            + (" (bearer token required)" if token else "")
            + ("; writable: POST/DELETE /records" if writer else ""),
            err=True,
        )
        hosts = AllowedHosts.for_server(host, bound, allowed_hosts)
        run_server(searcher, listener, token, hosts, writer)


def check_token(token: str | None) -> str | None:
    """The token, if an HTTP header can carry it: UTF-8 text without control characters
    and without spaces at either end (which HTTP strips)."""
    if token is None:
        return None
    problem = None
    if any(ord(character) < 32 or ord(character) == 127 for character in token):
        problem = "holds a control character"
    elif token != token.strip(" \t"):
        problem = "starts or ends with a space"
    else:
        try:
            token.encode("utf-8")
        except UnicodeEncodeError:
            problem = "is not valid UTF-8 text"
    if problem:
        raise click.BadParameter(
            f"the token {problem}, which an HTTP header cannot carry", param_hint="--token"
        )
    return token
