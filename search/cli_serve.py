"""Commands of the HTTP side: `serve` the index."""

from __future__ import annotations

import time
from pathlib import Path

import click

from search.cli_common import index_option, translate_errors
from search.paths import display_path

TOKEN_ENV = "CTXSEARCH_TOKEN"


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
@translate_errors
def serve(index_dir: Path, host: str, port: int, token: str | None) -> None:
    """Serve the index over HTTP: a JSON API and a search page at /.

    \b
    Endpoints: GET /search?q=...&k=...&mode=... (and POST /search with a JSON body),
    GET /compare?q=..., GET /documents/{id}, GET /info, GET /health; the OpenAPI
    schema is at /openapi.json and browsable at /docs. /search answers the JSON of
    `ctxsearch query --json`. The model loads once, at start; searches keep working
    while `ctxsearch index` updates the index, and see each update once it is published.

    \b
    Examples:
      ctxsearch serve --index notes.idx
      ctxsearch serve --index notes.idx --port 9000
      ctxsearch serve --index notes.idx --host 0.0.0.0 --token "$(openssl rand -hex 16)"
      curl 'http://127.0.0.1:8765/search?q=river+bank+erosion&k=3'
    """
    from search.server import is_loopback, run_server

    token = token or None
    if token is None and not is_loopback(host):
        raise click.UsageError(
            f"--host {host} can be reached from other machines: give --token "
            f"(or set ${TOKEN_ENV}) so that only clients holding it get answers"
        )
    from search.engine import Searcher

    with Searcher(index_dir) as searcher:
        started = time.perf_counter()
        searcher.encoders()
        click.echo(
            f"ctxsearch: {display_path(str(searcher.index.directory))}, model "
            f"{searcher.manifest.model} loaded in {time.perf_counter() - started:.1f}s; "
            f"serving http://{host}:{port}/" + (" (bearer token required)" if token else ""),
            err=True,
        )
        run_server(searcher, host, port, token)
