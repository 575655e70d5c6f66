"""`ctxsearch similar PATH[:LINE]`: more like this, from the index's stored vectors."""

from __future__ import annotations

import re
from pathlib import Path

import click

from indexer.errors import DocumentNotFound
from indexer.records.record import RECORD_PREFIX
from indexer.store.base import Target
from search.cli.common import BadInputError, echo_json, index_option, json_option, translate_errors
from search.cli.hit_formats import (
    LINE_FORMATS,
    chosen_format,
    format_option,
    link_template_option,
    print_lines,
)
from search.cli.hit_location import hit_location
from search.cli.request_options import parameter_option, request_options
from search.cli.shown_similarity import shown_similarity
from search.modes import Mode
from search.paths import given_path, places_as_indexed
from search.similar import SIMILAR_MODES
from search.text import terminal_text

_LINE = re.compile(r"(?s)(.+):([0-9]+)")


def split_item(given: str) -> tuple[str, int | None]:
    """PATH[:LINE] as the path and the line: a trailing `:N` is a line unless the whole
    argument is a file on disk; a file's path is made absolute, no link resolved (the
    command finds it as the index names it, `search.paths.as_indexed`); `record:ID` is
    kept as given."""
    line = None
    found = _LINE.fullmatch(given)
    if found and not Path(given).is_file():
        given, line = found.group(1), int(found.group(2))
    if given.startswith(RECORD_PREFIX):
        return given, line
    return given_path(given), line


@click.command()
@click.argument("item", metavar="PATH[:LINE]")
@index_option
@parameter_option("k")
@parameter_option(
    "mode",
    default=Mode.CONTEXTUAL,
    type=click.Choice(SIMILAR_MODES),
    help="The vector space searched (lexical and hybrid need query text).",
)
@parameter_option("all_chunks", help="Show every near passage, not one per document.")
@request_options("filter")
@format_option
@link_template_option
@json_option
@translate_errors
def similar(
    item: str,
    target: Target,
    output_format: str | None,
    link_template: str,
    as_json: bool,
    **options: object,
) -> None:
    """More like this: the documents nearest to an indexed one, or to one of its passages.

    \b
    PATH alone: the whole document, searched with the mean of its passages' stored
    vectors. PATH:LINE: the passage at that line, searched with its own vector.
    record:ID (or record:ID:LINE) names a record. Nothing is encoded, so no model
    loads. The document itself is left out; the filters work as in `query`. The sim
    column is the contextual cosine to the item.

    \b
    Examples:
      ctxsearch similar notes/garden/roses.md
      ctxsearch similar docs/tutorial/first-steps.md:42 -k 5
      ctxsearch similar record:faq-12 --where lang=en --json
      ctxsearch similar paper.md --mode static --under ~/papers --type md
      ctxsearch similar notes/garden/roses.md --format paths | xargs head -3
    """
    from search.engine import Searcher

    output_format = chosen_format(output_format, as_json, link_template)
    path, line = split_item(item)
    with Searcher(target) as searcher:
        if not path.startswith(RECORD_PREFIX):
            path = places_as_indexed(searcher.store, (path,))[0]
        options["under"] = places_as_indexed(searcher.store, options["under"])
        try:
            try:
                response = searcher.similar(path, line=line, **options)
            except DocumentNotFound:
                if line is None or not item.startswith(RECORD_PREFIX):
                    raise
                # a record id that itself ends in :N
                response = searcher.similar(item, **options)
        except DocumentNotFound as error:  # the user named something the index lacks
            raise BadInputError(terminal_text(error)) from error
    if output_format == "json":
        echo_json(response.to_dict())
        return
    if output_format in LINE_FORMATS:
        print_lines(output_format, response.results, link_template)
        return
    found = response.item
    where = f":{found.line}" if found.line is not None and found.vector == "passage" else ""
    copies = len(found.duplicates)
    click.echo(
        terminal_text(f"similar to {found.path}{where} ({found.vector}")
        + (f" of {found.passages} passages" if found.passages > 1 else "")
        + (f"; its {copies} cop{'y' if copies == 1 else 'ies'} left out" if copies else "")
        + ")",
        err=True,
    )
    if not response.results:
        click.echo("No results.")
        return
    click.echo(f"{'#':>3}  {'score':>6}  {'sim':>5}  location")
    for hit in response.results:
        score, similarity = shown_similarity(hit.score, 3), shown_similarity(hit.similarity)
        click.echo(
            f"{hit.rank:>3}  {score:>6}  {similarity:>5}  "
            + click.style(hit_location(hit), bold=True)
        )
        if hit.heading:
            click.echo(f"{'':>20}§ " + terminal_text(hit.heading))
        if hit.duplicates:
            others = len(hit.duplicates)
            click.echo(f"{'':>20}also in {others} other file{'' if others == 1 else 's'}")
        click.echo(f"{'':>20}" + terminal_text(hit.snippet))
