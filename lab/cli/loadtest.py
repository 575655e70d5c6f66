"""`loadtest`: concurrent clients against a running `ctxsearch serve`, for a fixed time."""

from __future__ import annotations

import click

from lab.cli.errors import translate_lab_errors
from search.cli.common import echo_json, json_option
from search.cli.serve import TOKEN_ENV, check_token
from search.limits import MAX_K
from search.modes import DEFAULT_MODE, MODES
from search.text import terminal_text


@click.command()
@click.argument("url", default="http://127.0.0.1:8765")
@click.option("--clients", "-c", default=8, show_default=True, type=click.IntRange(1, 256))
@click.option("--seconds", "-s", default=20.0, show_default=True, type=click.FloatRange(0.1, 3600))
@click.option("--mode", type=click.Choice(MODES), default=DEFAULT_MODE.value, show_default=True)
@click.option(
    "-k", "k", default=10, show_default=True, type=click.IntRange(1, MAX_K), help="Results."
)
@click.option("--query", "queries", multiple=True, help="A query to send (repeat; has defaults).")
@click.option("--token", envvar=TOKEN_ENV, default=None, help=f"Bearer token [${TOKEN_ENV}].")
@json_option
@translate_lab_errors
def loadtest(
    url: str,
    clients: int,
    seconds: float,
    mode: str,
    k: int,
    queries: tuple[str, ...],
    token: str | None,
    as_json: bool,
) -> None:
    """Load a running `ctxsearch serve` at URL: concurrent clients for a fixed time.

    \b
    Each client sends GET /search requests back to back until the time is up. Prints
    the requests, errors, requests per second and the p50/p95/max latency; exits 1 if
    any request failed. Run it from another terminal than the server.

    \b
    Examples:
      ctxsearch lab loadtest
      ctxsearch lab loadtest http://127.0.0.1:8765 --clients 8 --seconds 20 --mode hybrid
      ctxsearch lab loadtest http://10.0.0.5:8765 --token s3cret --mode lexical --json
    """
    from lab.load_test import DEFAULT_QUERIES, NothingSucceeded, run_load

    token = check_token(token or None)
    report = run_load(
        url, clients, seconds, mode=mode, k=k, queries=queries or DEFAULT_QUERIES, token=token
    )
    if as_json:
        echo_json(report.to_dict())
    else:
        click.echo(
            f"{report.url} {report.mode}: {report.clients} clients for {report.seconds:.1f}s: "
            f"{report.requests} requests, {report.errors} errors, "
            f"{report.requests_per_second:.1f} req/s, p50 {report.p50_ms:.1f} ms, "
            f"p95 {report.p95_ms:.1f} ms, max {report.max_ms:.1f} ms"
        )
    if not report.succeeded:
        first = report.error_samples[0] if report.error_samples else "no request was sent"
        raise NothingSucceeded(f"no request succeeded ({report.requests} sent): {first}")
    for sample in report.error_samples:
        click.echo(f"error: {terminal_text(sample)}", err=True)
    if report.errors:
        raise click.exceptions.Exit(1)
