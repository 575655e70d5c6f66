"""One search request: every parameter of a search described once and checked once.

`SearchRequest` is what `Searcher.search` takes. Each of its fields carries a
`Parameter`: its command-line flag, its HTTP and MCP names, its bounds and its help
text. The command line's options (`search.cli.request_options`), the model that `GET`
and `POST /search` share (`search.server.request_model`) and the arguments of the MCP
tools `search` and `similar` (`search.mcp_server.search_arguments`) are made from them, so a
new parameter (a new filter, say) is one field here, with its check in `_checked`; the
edges follow, and a test fails if one does not.

Cheap to import (the command line reads it before every query): no click, no pydantic,
no SQLAlchemy, no FAISS.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from indexer.errors import InvalidQuery
from indexer.reading.formats import FILE_TYPES
from indexer.reading.sources import path_text
from indexer.store.filters import SearchFilter, make_filter
from search.limits import (
    MAX_K,
    MAX_QUERY_CHARS,
    check_dense_weight,
    check_k,
    check_min_similarity,
    check_query,
)
from search.modes import DEFAULT_MODE, MODES, Mode
from search.query_syntax import read_query

DEFAULT_K = 10
# A `where` as JSON (HTTP's body, MCP): key to a value, a list of values (any of them),
# or an object of operators (`{">=": 2020}`); or a list of "key OP value" strings.
WhereScalar = str | int | float | bool
WhereJSON = (
    dict[str, WhereScalar | list[WhereScalar] | dict[str, WhereScalar | list[WhereScalar]]]
    | list[str]
)


class Kind(str, Enum):
    """What a parameter's value is; each edge turns it into its own type."""

    TEXT = "text"  # one string
    WHOLE = "whole"  # a whole number
    NUMBER = "number"  # a real number, or None
    FLAG = "flag"  # True or False
    CHOICE = "choice"  # one of the parameter's `choices`
    TEXTS = "texts"  # repeatable strings
    PLACES = "places"  # repeatable folders or files (the command line resolves relative ones)
    PAIRS = "pairs"  # repeatable key=value strings, or (from Python and JSON) an object


@dataclass(frozen=True)
class Parameter:
    """How one field of `SearchRequest` appears on the command line and over HTTP.

    `low` and `high` bound a number, or the length of a text. `flag` is the
    command-line option (empty for the query, the command's TEXT argument); `http` the
    query parameter and body key; `mcp` the MCP tools' argument name where it is not the
    field's (`similar` has a `path` of its own). `group` says where the command line
    lists the option (`search` or `filter`). `http_help` replaces `help` where the
    command line's words do not fit JSON (HTTP and MCP); `old_name` is an older keyword
    and hidden option of the same thing.
    """

    kind: Kind
    help: str
    http: str
    flag: str = ""
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    group: str = "search"
    http_help: str | None = None
    old_name: str | None = None
    mcp: str | None = None

    @property
    def json_help(self) -> str:
        """The help where the values come as JSON: HTTP's and MCP's."""
        return self.http_help or self.help


def _about(**description: Any) -> dict[str, Parameter]:
    """The metadata of a `SearchRequest` field that makes it a parameter."""
    return {"parameter": Parameter(**description)}


@dataclass(frozen=True)
class SearchRequest:
    """One search, checked: `InvalidQuery` on construction if any value is unusable.

    The repeatable filters (`under`, `path`, `file_type`, `where`) also take a single
    value or None, `under` also `Path`s, `where` also a mapping (`{"lang": "en"}`); they
    are kept as tuples (a mapping read-only), `mode` as a `Mode`, `k` as an int.
    `filter` is the `SearchFilter` the store applies inside every space searched, the
    query's phrases and exclusions among it (none with `literal`); `searched` what the
    query looks for, its text without them (`search.query_syntax`). See `Searcher.search`
    for what each parameter does.
    """

    query: str = field(
        metadata=_about(
            kind=Kind.TEXT,
            http="q",
            low=1,
            high=MAX_QUERY_CHARS,
            metavar="TEXT",
            help="What to look for, in natural language (a question or a description of "
            "the passage wanted); exact words also count in hybrid mode. In every mode, "
            '"a phrase" in double quotes must be in the passage (its words adjacent and in '
            'order) and -word or -"a phrase" must not be (a - inside a word, as in e-mail, '
            "is text).",
        ),
    )
    k: int = field(
        default=DEFAULT_K,
        metadata=_about(
            kind=Kind.WHOLE,
            flag="-k",
            http="k",
            low=1,
            high=MAX_K,
            help=f"How many results (at most {MAX_K}).",
        ),
    )
    mode: Mode = field(
        default=DEFAULT_MODE,
        metadata=_about(
            kind=Kind.CHOICE,
            flag="--mode",
            http="mode",
            choices=MODES,
            old_name="space",
            help="hybrid: meaning and exact words fused (contextual and lexical), best in "
            "general; contextual: meaning only; lexical: exact words only (BM25), for "
            "names, codes and identifiers; static: word vectors without context.",
        ),
    )
    all_chunks: bool = field(
        default=False,
        metadata=_about(
            kind=Kind.FLAG,
            flag="--all-chunks",
            http="all_chunks",
            help="Show every matching chunk, not one per document.",
        ),
    )
    literal: bool = field(
        default=False,
        metadata=_about(
            kind=Kind.FLAG,
            flag="--literal",
            http="literal",
            help="Read the query as plain text: double quotes and a leading - are ordinary "
            "characters (no phrases, no exclusions), as for text pasted from elsewhere.",
        ),
    )
    dense_weight: float | None = field(
        default=None,
        metadata=_about(
            kind=Kind.NUMBER,
            flag="--dense-weight",
            http="dense_weight",
            low=0.0,
            high=1.0,
            help="hybrid only: the contextual side's share of the fused score, 0 to 1 "
            "(default: weighed per query from both result lists).",
        ),
    )
    explain: bool = field(
        default=False,
        metadata=_about(
            kind=Kind.FLAG,
            flag="--explain",
            http="explain",
            help="Say why each hit ranks: its rank and score on each side, the fusion's "
            "weights and why, the query terms it holds and how rare they are, and the "
            "passage's words that carried its similarity, in the contextual and the static "
            "space (the model encodes the hits again: slower).",
        ),
    )
    under: tuple[str, ...] = field(
        default=(),
        metadata=_about(
            kind=Kind.PLACES,
            flag="--under",
            http="under",
            group="filter",
            help="Only documents in this folder (or this file); repeatable.",
            http_help="Only documents in this absolute folder or file, as the index names it "
            "(a hit's path, an indexed folder); repeatable.",
        ),
    )
    path: tuple[str, ...] = field(
        default=(),
        metadata=_about(
            kind=Kind.TEXTS,
            flag="--path",
            http="path",
            mcp="path_glob",
            metavar="GLOB",
            group="filter",
            help="Only documents whose path matches the glob: '*.md' matches file names, "
            "'tutorial/*.md' the end of the path (* crosses folders); repeatable.",
        ),
    )
    file_type: tuple[str, ...] = field(
        default=(),
        metadata=_about(
            kind=Kind.TEXTS,
            flag="--type",
            http="type",
            mcp="type",
            metavar="TYPE",
            group="filter",
            help=f"Only documents of this type: {', '.join(FILE_TYPES)} or an extension "
            "such as .py; repeatable.",
        ),
    )
    where: tuple[str, ...] | Mapping[str, Any] = field(
        default=(),
        metadata=_about(
            kind=Kind.PAIRS,
            flag="--where",
            http="where",
            metavar="KEY=VALUE",
            group="filter",
            help="Only records (from apps) whose metadata has KEY equal to VALUE (a number "
            'matches equal numbers: year=2020.0 finds 2020, 2020.0 and "2020.0"), or '
            "KEY!=VALUE, or KEY<, <=, >, >= a number or an ISO date (year>=2020, "
            "day<2024-05-01); repeatable: the = of one key are ORed (group=0 --where "
            "group=2: either), everything else ANDed.",
            http_help="Only records whose metadata meets this condition: key=value (a number "
            "matches equal numbers: year=2020.0 finds 2020), key!=value, key<, <=, >, >= a "
            "number or an ISO date (year>=2020); repeatable: the = of one key are ORed, "
            "everything else ANDed. Files have no metadata, so any condition leaves them out. "
            "As JSON (a POST body, an MCP call), a list of these strings or an object: "
            '{"lang": "en", "group": [0, 2], "year": {">=": 2020}}; an empty list of values '
            '({"group": []}) matches nothing.',
        ),
    )
    min_similarity: float | None = field(
        default=None,
        metadata=_about(
            kind=Kind.NUMBER,
            flag="--min-similarity",
            http="min_similarity",
            low=-1.0,
            high=1.0,
            metavar="X",
            group="filter",
            help="Drop hits whose contextual cosine (the `sim` column) is below X, e.g. 0.3; "
            "fewer than k hits, or none, may be left.",
            http_help="Drop hits whose contextual cosine (`similarity`) is below this, -1 to 1 "
            "(e.g. 0.3); fewer than k hits, or none, may be left.",
        ),
    )
    filter: SearchFilter = field(init=False, repr=False, compare=False)
    searched: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, value in _checked(self).items():
            object.__setattr__(self, name, value)


def parameters() -> Iterator[tuple[str, Any, Parameter]]:
    """Each parameter of a search, in order: its field name, its default (`MISSING` for
    the query) and its description."""
    for item in fields(SearchRequest):
        if "parameter" in item.metadata:
            yield item.name, item.default, item.metadata["parameter"]


def similar_parameters() -> Iterator[tuple[str, Any, Parameter]]:
    """The parameters a similar search takes besides its item and its own mode: `k`,
    `all_chunks` and every filter."""
    for name, default, parameter in parameters():
        if name in ("k", "all_chunks") or parameter.group == "filter":
            yield name, default, parameter


def parameter_of(name: str) -> tuple[Any, Parameter]:
    """The default and description of the parameter `name` (`KeyError` if none)."""
    for field_name, default, parameter in parameters():
        if field_name == name:
            return default, parameter
    raise KeyError(f"no search parameter {name!r}")


def search_request(query: str | SearchRequest, **options: Any) -> SearchRequest:
    """A request from keyword options, older names (`space` for `mode`) included, or
    `query` (a request already) with `options` changed."""
    for name, _default, parameter in parameters():
        if parameter.old_name is not None and parameter.old_name in options:
            older = options.pop(parameter.old_name)
            if older:  # the older name wins when given, as it always did
                options[name] = older
    if isinstance(query, SearchRequest):
        return replace(query, **options) if options else query
    return SearchRequest(query, **options)


def _checked(request: SearchRequest) -> dict[str, Any]:
    """The request's values made plain (and its filter), or `InvalidQuery`; the checks
    run in this order, so the first problem is the one reported."""
    mode = check_query(request.query, request.k, request.mode, request.all_chunks)
    check_dense_weight(request.dense_weight, mode)
    check_min_similarity(request.min_similarity)
    under = _places(request.under)
    path, file_type = _texts(request.path, "path"), _texts(request.file_type, "type")
    where = _pairs(request.where)
    if not isinstance(request.literal, bool):
        raise InvalidQuery(f"literal must be True or False, not {request.literal!r}")
    text = read_query(request.query, request.literal)
    return {
        "k": check_k(request.k),
        "mode": mode,
        "under": under,
        "path": path,
        "file_type": file_type,
        "where": where,
        "filter": make_filter(under, path, file_type, where, text.words),
        "searched": text.searched,
    }


def _places(under: object) -> tuple[str, ...]:
    if under is None:
        return ()
    if isinstance(under, (str, Path)):
        under = [under]
    if not isinstance(under, (list, tuple)):
        raise InvalidQuery(f"under must be a path or a list of paths, not {under!r}")
    return tuple(path_text(item) if isinstance(item, Path) else item for item in under)


def _texts(value: object, name: str) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    try:
        return tuple(value)  # type: ignore[call-overload]
    except TypeError:
        raise InvalidQuery(f"a {name} filter must be a non-empty string") from None


def _pairs(where: object) -> Any:  # anything else is left for `where_conditions` to refuse
    if where is None:
        return ()
    if isinstance(where, Mapping):
        return MappingProxyType(dict(where))
    if isinstance(where, str):
        return (where,)
    return tuple(where) if isinstance(where, (list, tuple)) else where
