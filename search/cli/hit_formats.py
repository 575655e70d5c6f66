"""How `query` and `similar` print their hits: the `--format` choices beside the table.

Each format but the table and JSON is one line per hit, for other tools: `vimgrep`
(`path:line:column:text`, for `vim -q` and grep modes), `paths` (each file once, best
first, `grep -l` style, for `xargs`), `jsonl` (each hit as the JSON object `--json`
lists it, a line at a time, flushed as it is written) and `link` (an editor link per
hit, from `--link-template`). Paths are shown as the table shows them, relative to the
working directory below it; a link's `{path}` is absolute, since what opens it does
not share the working directory.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import click

from indexer.config import DEFAULT_LINK_TEMPLATE, LINK_TEMPLATE
from indexer.records.record import RECORD_PREFIX
from search.paths import display_path
from search.text import json_text, terminal_text

if TYPE_CHECKING:
    from search.engine import Hit

# Formats printed a line per hit (the table and json are the commands' own).
LINE_FORMATS = ("vimgrep", "paths", "jsonl", "link")
FORMAT_HELP = (
    "vimgrep: path:line:column:text at the hit's best-matching line (a PDF's line within "
    "its page, [page N] before the text), for editors (vim -q, VS Code, Emacs grep mode); "
    "paths: each file once, best first (for xargs); jsonl: one hit a line, the JSON of a "
    "--json hit, flushed as written; link: an editor link per hit (--link-template)."
)
# A template that begins with a URL scheme gets its path percent-encoded.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_FIELDS = frozenset({"path", "line", "column"})


format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json", *LINE_FORMATS]),
    default=None,
    help="table (default), json (as --json), or " + FORMAT_HELP,
)


def link_template_option(command: Any) -> Any:
    """The `--link-template` option, its default from the environment."""
    return click.option(
        "--link-template",
        envvar=LINK_TEMPLATE.name,
        default=DEFAULT_LINK_TEMPLATE,
        show_default=True,
        metavar="TEMPLATE",
        help="The link --format link prints per hit: {path} (absolute; percent-encoded when "
        "the template is a URL), {line}, {column}. E.g. 'vscode://file{path}:{line}', "
        f"'idea://open?file={{path}}&line={{line}}', '{{path}}:{{line}}'. "
        f"[env: {LINK_TEMPLATE.name}]",
    )(command)


def chosen_format(output_format: str | None, as_json: bool, link_template: str) -> str:
    """The format asked for (`--json` is `--format json`; the table by default); a usage
    error for `--json` with another format, or a link template that cannot be filled."""
    if as_json and output_format not in (None, "json"):
        raise click.UsageError(f"--json and --format {output_format} do not go together")
    chosen = "json" if as_json else output_format or "table"
    if chosen == "link":
        _check_link_template(link_template)
    return chosen


def _check_link_template(template: str) -> None:
    """A usage error for a template naming a field there is not, or badly formed."""
    try:
        named = {name for _text, name, _spec, _conv in _parsed(template) if name is not None}
    except ValueError as error:
        raise click.UsageError(f"--link-template {template!r}: {error}") from None
    unknown = sorted(named - _FIELDS)
    if unknown:
        raise click.UsageError(
            f"--link-template {template!r}: no field {{{unknown[0]}}} (use {{path}}, "
            "{line}, {column})"
        )


def _parsed(template: str) -> list[tuple[str, str | None, str | None, str | None]]:
    import string

    return list(string.Formatter().parse(template))


def print_lines(output_format: str, hits: Iterable[Hit], link_template: str) -> None:
    """Print the hits in one of `LINE_FORMATS`, a line each (`paths`: a line per file)."""
    shown: set[str] = set()
    for hit in hits:
        if output_format == "jsonl":
            click.echo(json_text(hit.to_dict()))
            sys.stdout.flush()
        elif output_format == "vimgrep":
            click.echo(vimgrep_line(hit))
        elif output_format == "link":
            click.echo(link_line(hit, link_template))
        elif hit.path not in shown:
            shown.add(hit.path)
            click.echo(display_path(hit.path))


def vimgrep_line(hit: Hit) -> str:
    """path:line:column:text, the format of `vim -q` and ripgrep's --vimgrep, at the line
    that best matches; for a PDF the line within its page, the page in front of the text
    (`path:LINE:1:[page N] text`)."""
    text = " ".join(hit.snippet.split())
    line, page = hit_line(hit)
    if page is not None:
        text = f"[page {page}] {text}"
    return f"{display_path(hit.path)}:{line}:1:{terminal_text(text)}"


def link_line(hit: Hit, template: str) -> str:
    """The hit's editor link: `template` with its absolute path, line and column. A record
    has no file to open: its line is its `record:ID`."""
    if hit.path.startswith(RECORD_PREFIX):
        return terminal_text(hit.path)
    path = quote(hit.path, safe="/") if _URL.match(template) else hit.path
    line, _page = hit_line(hit)
    return terminal_text(template.format(path=path, line=line, column=1))


def hit_line(hit: Hit) -> tuple[int, int | None]:
    """The line an editor opens the hit at (its best-matching line, else its first), and
    for a PDF hit without file lines the page that line is counted in."""
    line = hit.match_line or hit.line
    page = hit.match_page or hit.page
    if page is not None and line is None:
        return hit.match_page_line or 1, page
    return line or 1, None
