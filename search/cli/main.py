"""The `ctxsearch` command line: a thin layer over `Indexer` and `Searcher`.

Nothing here imports torch at module level: `ctxsearch --help` and `ctxsearch info`
stay fast. Library errors become one line on stderr and an exit code:
2 for a usage mistake, 1 for a failure (see the README's table).
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext, redirect_stdout
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

import click

from indexer.encoders.choices import QUERY_ENCODER_ENV, QUERY_ENCODERS
from indexer.reading.formats import readable_summary
from indexer.records.files import RECORD_FORMATS, read_records, record_format
from indexer.records.record import value_text
from indexer.runs.write_settings import WriteSettings
from indexer.store.base import Target
from indexer.version import __version__
from search.cli.common import (
    EXIT_PARTIAL,
    BadInputError,
    echo_json,
    index_option,
    json_option,
    translate_errors,
)
from search.cli.eval_index import eval_index
from search.cli.explanation_view import explanation_lines
from search.cli.hit_formats import (
    LINE_FORMATS,
    chosen_format,
    format_option,
    link_template_option,
    print_lines,
)
from search.cli.hit_location import hit_location
from search.cli.interrupts import InterruptibleGroup
from search.cli.mcp import mcp
from search.cli.request_options import parameter_option, request_options, takes_request
from search.cli.serve import serve
from search.cli.shown_similarity import shown_similarity
from search.cli.similar import similar
from search.cli.watch import watch
from search.cli.write_options import takes_settings, write_options
from search.limits import MAX_K
from search.modes import Mode
from search.paths import display_path, places_as_indexed
from search.request import SearchRequest, search_request
from search.text import terminal_text

RAY_NOTE = "(raylet)"  # how Ray marks the notes it prints on a driver (in colour or not)
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


@click.group(cls=InterruptibleGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ctxsearch")
def cli() -> None:
    """Semantic search over your own folders of documents.

    \b
    Examples:
      ctxsearch index ~/notes
      ctxsearch query "how do tower cranes stay upright"
      ctxsearch query "bank erosion after a flood" --mode static -k 5
      ctxsearch compare "the python swallowed its prey"
      ctxsearch info
      ctxsearch serve --port 8765
    """


def naming_formats(command: Callable[..., Any]) -> Callable[..., Any]:
    """The command with READABLE in its help replaced by the formats read
    (`indexer.reading.formats`)."""
    command.__doc__ = (command.__doc__ or "").replace("READABLE", readable_summary())
    return command


@cli.command()
@click.argument("path", nargs=-1, type=click.Path(path_type=Path))
@index_option
@click.option(
    "--jsonl",
    "--records",
    "jsonl",
    type=click.File("rb"),
    default=None,
    metavar="FILE",
    help="Upsert records from an app instead of a folder: JSON lines, one "
    '{"id": ..., "text": ..., "metadata": {...}} a line; a JSON array of them; or CSV '
    "or TSV with a header, its id and text columns the record's, the others metadata "
    "(- reads stdin); one atomic run.",
)
@click.option(
    "--format",
    "records_format",
    type=click.Choice(RECORD_FORMATS),
    default=None,
    help="The format of --records FILE (default: by its extension, .jsonl .json .csv "
    ".tsv; JSON lines for stdin).",
)
@write_options
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Leave out files matching this gitignore-style pattern (relative to PATH); "
    "repeatable; remembered for PATH (given again, replaces the remembered list).",
)
@click.option(
    "--include",
    multiple=True,
    metavar="GLOB",
    help="Index only files matching one of these patterns (they also bring back files "
    "the default excludes leave out); repeatable; remembered like --exclude.",
)
@click.option(
    "--default-excludes/--no-default-excludes",
    default=None,
    help="Leave out web assets: style sheets, source maps, minified files, JavaScript in "
    "_static/ static/ assets/ js/, Sphinx _sources/ (default: on; remembered).",
)
@click.option(
    "--follow-links-outside/--no-follow-links-outside",
    default=None,
    help="Read files that links under PATH lead to outside PATH (default: off; such a "
    "link is skipped and named; remembered). Links to folders are never followed.",
)
@click.option(
    "--forget-rules", is_flag=True, help="Drop PATH's remembered --exclude/--include first."
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--wait", is_flag=True, help="If another process is writing the index, wait.")
@json_option
@translate_errors
@takes_settings
@naming_formats
def index(
    path: tuple[Path, ...],  # every PATH given (the argument keeps its recorded name)
    target: Target,
    jsonl: BinaryIO | None,
    records_format: str | None,
    settings: WriteSettings,
    exclude: tuple[str, ...],
    include: tuple[str, ...],
    default_excludes: bool | None,
    follow_links_outside: bool | None,
    forget_rules: bool,
    quiet: bool,
    wait: bool,
    as_json: bool,
) -> None:
    """Index the documents under each folder PATH, and each file PATH (again: only what
    changed is encoded), or the records of a FILE (--records, or --jsonl: JSON lines,
    JSON, CSV or TSV).

    Reads READABLE (docs/formats.md); skips hidden folders, .git and binary files,
    and links that lead outside PATH (named on stderr). A file that fails is reported
    and the run goes on. Each folder is a root of its own, with its own rules; a file
    is a root that is one file (its edits and its removal are seen, never the files
    beside it; --exclude and the like are a folder's), unless it lies under an indexed
    folder, which holds it already. Each PATH is one run with its own summary; a PATH
    that is not there stops the command before anything is written. Records
    (--records) are upserted by id into the same index: a record whose text is
    unchanged is not encoded again; a bad line changes nothing.

    \b
    Examples:
      ctxsearch index ~/notes
      ctxsearch index ~/notes ~/papers ~/Downloads/report.pdf
      ctxsearch index sample_corpus --index /tmp/ix --json
      ctxsearch index papers/ --index papers.idx --pooling mean-last4
      ctxsearch index ~/archive --index-type hnsw
      ctxsearch index ~/archive --quantize int8
      ctxsearch index ~/notes --index notes.idx --static model2vec
      ctxsearch index ~/notes --precision fp32
      ctxsearch index docs/ --exclude 'release-notes.md' --exclude 'archive/'
      ctxsearch index docs/ --include '*.md' --include '*.rst'
      ctxsearch index ~/archive --ray auto --json
      ctxsearch index ~/archive --ray 10.0.0.5:6379 --index postgresql+psycopg://me@db/search
      ctxsearch index --jsonl articles.jsonl --index app.idx --json
      ctxsearch index --records articles.csv --index app.idx
      cat articles.tsv | ctxsearch index --records - --format tsv --index app.idx
    """
    from indexer.runs.indexer import Indexer
    from indexer.runs.inputs import checked_inputs
    from search.cli.progress import ProgressBars

    paths = path
    if bool(paths) == (jsonl is not None):
        raise click.UsageError(
            "give folders or files (PATH...) or --jsonl FILE, not both or neither"
        )
    if records_format is not None and jsonl is None:
        raise click.UsageError("--format is the format of --records FILE, not of a folder")
    folder_only = (default_excludes, follow_links_outside)
    rules_given = exclude or include or folder_only != (None, None) or forget_rules
    if jsonl is not None and rules_given:
        raise click.UsageError(
            "--exclude, --include, --default-excludes, --follow-links-outside and "
            "--forget-rules apply to folders, not to --jsonl"
        )
    # A path that is not there (or cannot be) stops the command before anything is written.
    inputs = checked_inputs(target, paths)
    if rules_given and inputs and all(given.is_file for given in inputs):
        raise click.UsageError(
            "--exclude, --include, --default-excludes, --follow-links-outside and "
            "--forget-rules apply to folders, not to a file given on its own"
        )
    # A bad line changes nothing: the whole file is read and checked first.
    records = None
    if jsonl is not None:
        name = getattr(jsonl, "name", "<stdin>")
        name = "stdin" if name in ("-", "<stdin>") else display_path(name)
        records = read_records(jsonl, name, record_format(name, records_format))
        if not records:
            raise BadInputError(f"{name}: no records in the file")
    indexer = Indexer(target, settings=settings)
    bars_on = not quiet and not as_json
    if jsonl is not None:
        bars = ProgressBars(enabled=bars_on, unit="records")
        with _ray_notes_summed_up(settings.ray):
            try:
                result = indexer.upsert_records(records, progress=bars, wait=wait)
            finally:
                bars.close()
        show_record_summary(result, as_json)
        return
    summaries = []
    for given in inputs:
        bars = ProgressBars(enabled=bars_on, unit="files")
        with _ray_notes_summed_up(settings.ray):
            try:
                if given.is_file:
                    summary = indexer.index_file(given.given, progress=bars, wait=wait)
                else:
                    summary = indexer.index_folder(
                        given.given,
                        progress=bars,
                        wait=wait,
                        exclude=exclude or None,
                        include=include or None,
                        default_excludes=default_excludes,
                        forget_rules=forget_rules,
                        follow_links_outside=follow_links_outside,
                    )
            finally:
                bars.close()
        summaries.append(summary)
        label = f"{display_path(str(given.given))}: " if len(inputs) > 1 else ""
        show_summary(summary, label, given.path, as_json)
    if as_json:
        pairs = zip(inputs, summaries, strict=True)
        shown = [{"path": str(given.path), **summary.to_dict()} for given, summary in pairs]
        echo_json(shown[0] if len(shown) == 1 else shown)
    if any(summary.failed for summary in summaries):
        raise click.exceptions.Exit(EXIT_PARTIAL)


@contextmanager
def _ray_notes_summed_up(ray: str | None) -> Iterator[None]:
    """Ray prints its own notes (a worker it restarts, say, with a traceback) on stdout:
    keep stdout for the summary and --json, and sum the notes up in one line."""
    notes = io.StringIO()
    try:
        with redirect_stdout(notes) if ray else nullcontext():
            yield
    finally:
        _sum_up_ray_notes(notes.getvalue())


def show_summary(summary, label: str, path: Path, as_json: bool) -> None:  # IndexSummary
    """What one run of `index` did: its files' failures and notes on stderr, and (but
    with --json) its summary line, `label` (the input's name, given several) first."""
    named = label or f"{display_path(str(path))}: "
    if summary.covered_by is not None:
        if not as_json:
            click.echo(
                f"{named}under the indexed folder {display_path(summary.covered_by)}, which "
                "holds it (by its rules): nothing changed. The index holds "
                f"{summary.total_documents} documents, {summary.total_chunks} chunks."
            )
        return
    for failure in summary.failures:
        reason = terminal_text(failure.reason)
        click.echo(f"failed {display_path(failure.path)}: {reason}", err=True)
    for skipped in summary.skipped_files:
        reason = terminal_text(skipped.reason)
        click.echo(f"skipped {display_path(skipped.path)}: {reason}", err=True)
    if summary.query_export not in ("", "ready"):
        note = terminal_text(summary.query_export)
        click.echo(f"ctxsearch: queries will be encoded with torch (slower): {note}", err=True)
    for large in summary.large_files:
        share = large.chunks / summary.total_chunks if summary.total_chunks else 0.0
        click.echo(
            f"large {display_path(large.path)}: {large.characters / 1000:,.0f}k characters, "
            f"{large.chunks} chunks ({share:.0%} of the index); if it swamps results, "
            "leave it out with --exclude",
            err=True,
        )
    if not as_json:
        if summary.missing:
            click.echo(
                f"{named}the file is gone: its document left the index; it stays a root of "
                "its own for its return (`ctxsearch remove` forgets it)."
            )
        click.echo(
            f"{label}{summary.added} added, {summary.updated} updated, {summary.removed} removed, "
            f"{summary.unchanged} unchanged, {summary.failed} failed, {summary.skipped} "
            f"skipped; {summary.chunks} chunks ({summary.encoded} encoded) "
            f"in {summary.seconds:.1f}s. The index holds {summary.total_documents} "
            f"documents, {summary.total_chunks} chunks."
        )
        if summary.moved:
            click.echo(
                f"{summary.moved} moved or renamed (same content): kept without re-encoding."
            )
        if summary.nested_roots:
            shown = ", ".join(display_path(root) for root in summary.nested_roots)
            click.echo(
                f"Roots of their own inside it, brought up to date with their own rules: {shown}."
            )
        if summary.forgotten_roots:
            shown = ", ".join(display_path(root) for root in summary.forgotten_roots)
            click.echo(
                f"Forgot the roots whose folders are gone (their files are this folder's): {shown}."
            )
        rules = summary.rules
        kept = [f"exclude {pattern}" for pattern in rules.get("exclude", [])]
        kept += [f"include {pattern}" for pattern in rules.get("include", [])]
        if not rules.get("default_excludes", True):
            kept.append("no default excludes")
        if rules.get("follow_links_outside"):
            kept.append("follow links outside")
        if kept:
            click.echo(terminal_text("Rules remembered for this folder: " + ", ".join(kept) + "."))
        if summary.taken_in_roots:
            shown = ", ".join(display_path(root) for root in summary.taken_in_roots)
            click.echo(
                f"Files indexed on their own inside it, now its files (by its rules): {shown}."
            )


def show_record_summary(summary, as_json: bool) -> None:  # summary: RecordSummary
    """What an upsert of records did, as one line or as JSON."""
    if as_json:
        echo_json(summary.to_dict())
        return
    if summary.query_export not in ("", "ready"):
        note = terminal_text(summary.query_export)
        click.echo(f"ctxsearch: queries will be encoded with torch (slower): {note}", err=True)
    click.echo(
        f"records: {summary.added} added, {summary.updated} updated, "
        f"{summary.metadata_updated} with new metadata only, {summary.unchanged} unchanged; "
        f"{summary.chunks} chunks ({summary.encoded} encoded) in {summary.seconds:.1f}s. "
        "The index holds "
        f"{summary.total_documents} documents, {summary.total_chunks} chunks."
    )


def _sum_up_ray_notes(notes: str) -> None:
    """One line on stderr for what Ray reported during a run (its logs have the rest)."""
    lines = [_COLOUR.sub("", line) for line in notes.splitlines()]
    lines = [line for line in lines if line.startswith(RAY_NOTE)]
    if lines:
        first = lines[0].removeprefix(RAY_NOTE).strip().split(". ")[0][:160]
        click.echo(
            f"ctxsearch: Ray reported {len(lines)} event(s) on the cluster, such as: {first}",
            err=True,
        )


@cli.command()
@index_option
@request_options("search")
@click.option(
    "--query-encoder",
    type=click.Choice(QUERY_ENCODERS),
    envvar=QUERY_ENCODER_ENV,
    default="auto",
    show_default=True,
    help="auto: encode the query without torch (ONNX Runtime, the saved token table) where "
    "the model's export is there, else with torch; onnx: without torch or fail; torch: "
    f"the reference encoders. [env: {QUERY_ENCODER_ENV}]",
)
@click.option("--verbose", "-v", is_flag=True, help="Say on stderr why torch stood in, if it did.")
@request_options("filter")
@format_option
@link_template_option
@json_option
@translate_errors
@takes_request
def query(
    request: SearchRequest,
    target: Target,
    query_encoder: str,
    verbose: bool,
    output_format: str | None,
    link_template: str,
    as_json: bool,
) -> None:
    """Search the index for TEXT, best match first (TEXT - : read it from standard input).

    \b
    Each hit shows its score, its contextual similarity (sim: the raw cosine, which
    says how close the best match really is; rounded down, so that a hit shown as 0.30
    is one --min-similarity 0.3 keeps), its match (strong: it likely answers the query;
    weak: on its topic at most; none: nothing suggests it does), and path:line at the
    line that matches best (page and line for PDFs); copies of a file are one hit,
    "also in N other files".

    \b
    In every mode, "a phrase" must be in the passage (its words adjacent and in
    order, as the lexical index splits and stems them) and -word or -"a phrase"
    must not be; a - inside a word (e-mail) or before a digit is text, and a quote
    without its pair is an ordinary character. A query starting with - goes after --.

    \b
    Examples:
      ctxsearch query "where do I open a savings account"
      ctxsearch query '"hinted handoff" -paxos'
      ctxsearch query -- '-paxos "hinted handoff"'
      ctxsearch query "python swallowed its prey" -k 3 --json
      ctxsearch query "tower crane safety" --mode lexical --all-chunks
      ctxsearch query "error code E1234 in the pump manual" --dense-weight 0.2
      ctxsearch query "interest on savings" -k 3 --explain
      ctxsearch query "tower crane safety" --query-encoder torch --json
      ctxsearch query "dependency injection" --under docs/tutorial --path '*.md' -k 10
      ctxsearch query "regex lookbehind" --type html --min-similarity 0.3
      ctxsearch query "refund policy" --where lang=en --where year=2024 --json
      vim -q <(ctxsearch query "path operations" --format vimgrep)
      ctxsearch query "path operations" --format paths | xargs wc -l
      ctxsearch query "path operations" --format jsonl | jq -r .snippet
      ctxsearch query "path operations" --format link --link-template '{path}:{line}'
      xclip -o | ctxsearch query - -k 5

    \b
    A filter that matches nothing in the index says why on stderr (hint: ...); so
    does an index whose contextual vectors a run is still filling (note: ...).
    """
    from search.engine import Searcher

    if request.query == "-":
        request = replace(request, query=_standard_input_query())

    output_format = chosen_format(output_format, as_json, link_template)
    with Searcher(target, query_encoder=query_encoder) as searcher:
        if request.under:
            under = places_as_indexed(searcher.store, request.under)
            request = search_request(request, under=under)
        response = searcher.search(request)
    if verbose and response.query_encoder_note:
        click.echo(f"ctxsearch: {terminal_text(response.query_encoder_note)}", err=True)
    if output_format == "json":
        echo_json(response.to_dict())
    elif output_format in LINE_FORMATS:
        print_lines(output_format, response.results, link_template)
    elif not response.results:
        minimum = request.min_similarity
        weak = f" at or above --min-similarity {minimum}" if minimum else ""
        click.echo(f"No results{weak}.")
    for hint in response.hints:  # only when there are no hits (`search.hints`)
        click.echo(f"hint: {terminal_text(hint)}", err=True)
    filling = response.completeness
    if filling is not None and not filling.contextual_complete:
        click.echo(f"note: the index is {filling.describe()}", err=True)
    if output_format != "table" or not response.results:
        return
    click.echo(f"{'#':>3}  {'score':>6}  {'sim':>5}  {'match':<6}  location")
    for hit in response.results:
        found = ", ".join(f"{name} #{rank}" for name, rank in hit.found_by.items())
        similarity = shown_similarity(hit.similarity)
        click.echo(
            f"{hit.rank:>3}  {hit.score:6.3f}  {similarity:>5}  {hit.match or '':<6}  "
            + click.style(hit_location(hit), bold=True)
            + (f"  ({found})" if found else "")
        )
        if hit.section or hit.heading:
            click.echo(f"{'':>28}§ " + terminal_text(hit.section or hit.heading))
        if hit.duplicates:
            others = len(hit.duplicates)
            click.echo(f"{'':>28}also in {others} other file{'' if others == 1 else 's'}")
        if hit.metadata:
            pairs = ", ".join(f"{key}={value_text(value)}" for key, value in hit.metadata.items())
            click.echo(f"{'':>28}" + terminal_text(pairs))
        click.echo(f"{'':>28}" + highlighted(hit.snippet, hit.highlights))
        if hit.explain is not None:
            for line in explanation_lines(hit.explain):
                click.echo(f"{'':>28}{line}")
    timings = response.timings
    encoders = "".join(f", {kind}" for kind in dict.fromkeys(response.query_encoder.values()))
    click.echo(
        f"({response.mode}{encoders}; model load {timings['model_load_seconds']:.2f}s, "
        f"encode {timings['encode_seconds'] * 1000:.0f} ms, "
        f"search {timings['search_seconds'] * 1000:.0f} ms)",
        err=True,
    )


def _standard_input_query() -> str:
    """`query -`: the query text read from standard input, stripped (a usage error if empty)."""
    text = sys.stdin.read().strip()
    if not text:
        raise BadInputError("query -: standard input held no query text")
    return text


def highlighted(snippet: str, spans: list[tuple[int, int]]) -> str:
    """The snippet with its highlighted spans in bold yellow (plain when not a terminal),
    every piece terminal-safe (a document may hold escape sequences)."""
    pieces, position = [], 0
    for start, end in spans:
        marked = click.style(terminal_text(snippet[start:end]), fg="yellow", bold=True)
        pieces += [terminal_text(snippet[position:start]), marked]
        position = end
    return "".join([*pieces, terminal_text(snippet[position:])])


@cli.command()
@parameter_option("query")
@index_option
@parameter_option("k", help=f"How many results in each list (at most {MAX_K}).")
@parameter_option("mode", default=Mode.CONTEXTUAL, help="The mode shown on the right.")
@parameter_option(
    "mode", "--against", "against", default=Mode.STATIC, help="The baseline shown on the left."
)
@json_option
@translate_errors
def compare(query: str, target: Target, k: int, mode: str, against: str, as_json: bool) -> None:
    """Show two modes' results for TEXT side by side (static vs contextual by default).

    \b
    Markers on the right: ▲n moved up n places from its rank on the left, ▼n moved
    down, = same rank, new = not in the left top k. On the left, gone = not in the
    right top k.

    \b
    Examples:
      ctxsearch compare "the bank of the river eroded in the flood"
      ctxsearch compare "jaguar top speed" -k 5 --json
      ctxsearch compare "pitch of a roof" --mode hybrid --against lexical
    """
    from search.cli.comparison_view import side_by_side
    from search.comparison import compare_modes
    from search.engine import Searcher

    if mode == against:
        raise click.UsageError("--mode and --against must differ")
    with Searcher(target) as searcher:
        comparison = compare_modes(searcher, query, k=k, mode=mode, against=against)
    if as_json:
        echo_json(comparison)
    else:
        click.echo(side_by_side(comparison, left=against, right=mode))


@cli.command()
@index_option
@json_option
@translate_errors
def info(target: Target, as_json: bool) -> None:
    """Show how an index was built and what it holds (fast: loads no model).

    \b
    Examples:
      ctxsearch info
      ctxsearch info --index /tmp/ix --json
    """
    from indexer.store.backends import describe_store
    from indexer.store.completeness import Completeness

    description = describe_store(target)
    if as_json:
        echo_json(description)
        return
    for key, value in description.items():
        if key == "completeness":
            shown = Completeness(value["passages"], value["contextual_passages"])
            click.echo(f"contextual vectors: {shown.describe()}")
        elif key == "folders":
            click.echo("folders:")
            for folder in value:
                click.echo(
                    terminal_text(
                        f"  {folder['root']}: {folder['documents']} documents, "
                        f"{folder['chunks']} chunks"
                    )
                )
        elif isinstance(value, dict):
            click.echo(f"{key}:")
            for name, item in value.items():
                click.echo(terminal_text(f"  {name}: {item}"))
        else:
            click.echo(terminal_text(f"{key}: {value}"))


@cli.command(name="ls")
@index_option
@json_option
@translate_errors
def list_roots(target: Target, as_json: bool) -> None:
    """List the folders indexed (roots) with their documents and chunks (loads no model).

    \b
    A folder indexed inside another one that was indexed on its own counts for itself.
    Documents from before roots were recorded show under (no root).

    \b
    Examples:
      ctxsearch ls
      ctxsearch ls --index /tmp/ix --json
    """
    from indexer.store.backends import describe_store
    from indexer.store.completeness import Completeness

    folders = describe_store(target)["folders"]
    if as_json:
        echo_json(folders)
        return
    if not folders:
        click.echo("The index holds no folders.")
        return
    click.echo(f"{'documents':>9}  {'chunks':>7}  root")
    for folder in folders:
        click.echo(
            f"{folder['documents']:>9,}  {folder['chunks']:>7,}  " + terminal_text(folder["root"])
        )
    filling = Completeness(
        sum(folder["chunks"] for folder in folders),
        sum(folder["contextual_passages"] for folder in folders),
    )
    if not filling.contextual_complete:
        click.echo(f"The index is {filling.describe()}.")


@cli.command()
@click.argument("path", type=click.Path(path_type=Path))
@index_option
@click.option("--wait", is_flag=True, help="If another process is writing the index, wait.")
@json_option
@translate_errors
def remove(path: Path, target: Target, wait: bool, as_json: bool) -> None:
    """Remove the documents of a folder or a file (PATH) from the index.

    \b
    Every space loses them in one atomic run; a root at or under PATH is forgotten
    with its remembered --exclude/--include. PATH need not exist on disk any more.

    \b
    Examples:
      ctxsearch remove ~/notes/old-project
      ctxsearch remove docs/changelog.md --index docs.idx --json
    """
    from indexer.runs.removal import remove_path

    result = remove_path(target, path, wait=wait)
    if as_json:
        echo_json(result)
        return
    click.echo(
        f"removed {result['removed_documents']} documents ({result['removed_chunks']} chunks)"
        f" and {result['removed_roots']} roots under {display_path(str(result['path']))}. "
        f"The index holds {result['total_documents']} documents, "
        f"{result['total_chunks']} chunks."
    )


@cli.command()
@index_option
@json_option
@translate_errors
def verify(target: Target, as_json: bool) -> None:
    """Check that SQL, every vector space and the lexical space agree (exit 1 if not).

    \b
    Each passage is also compared with its file's text at its offsets, for the files
    that are as they were indexed (read again); a note says what was compared.

    \b
    Examples:
      ctxsearch verify
      ctxsearch verify --index /tmp/ix --json
    """
    from dataclasses import asdict

    from indexer.store.backends import verify_target

    report = verify_target(target)
    if as_json:
        echo_json({**asdict(report), "consistent": report.consistent})
    else:
        counts = ", ".join(f"{name} {value}" for name, value in report.counts.items())
        click.echo(terminal_text(f"{report.directory}: {counts}"))
        for problem in report.problems:
            click.echo(f"problem: {terminal_text(problem)}")
        for note in report.notes:
            click.echo(f"note: {terminal_text(note)}")
        click.echo("consistent" if report.consistent else "INCONSISTENT")
    if not report.consistent:
        raise click.exceptions.Exit(1)


@cli.command()
@index_option
@click.option("--wait", is_flag=True, help="If another process is writing the index, wait.")
@json_option
@translate_errors
def repair(target: Target, wait: bool, as_json: bool) -> None:
    """Rebuild the vector spaces and the lexical space from the stored chunks.

    \b
    The documents and chunks in SQL are the source of truth; the source folder is not
    read again. The rebuilt index is published atomically, like an indexing run.

    \b
    Examples:
      ctxsearch verify || ctxsearch repair
      ctxsearch repair --index /tmp/ix --json
    """
    from indexer.runs.repair import repair_index
    from indexer.store.backends import verify_target

    result = repair_index(target, wait=wait)
    report = verify_target(target)
    result = {**result, "consistent": report.consistent, "problems": report.problems}
    if as_json:
        echo_json(result)
    else:
        click.echo(
            f"re-encoded {result['chunks']} chunks into generation {result['generation']}; "
            + (
                "consistent"
                if report.consistent
                else "still inconsistent: " + terminal_text("; ".join(report.problems))
            )
        )
    if not report.consistent:
        raise click.exceptions.Exit(1)


for command, name in (
    (eval_index, "eval-index"),
    (serve, "serve"),
    (watch, "watch"),
    (similar, "similar"),
    (mcp, "mcp"),
):
    cli.add_command(command, name)
