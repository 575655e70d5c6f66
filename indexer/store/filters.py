"""Which documents a search may return: by folder, by path glob, by file type, by metadata.

A `SearchFilter` becomes one SQL condition on the `documents` table (`SearchFilter.sql`),
the same meaning on every dialect, so each backend applies it inside its searches (FAISS
through an id selector of the allowed chunks, pgvector, FTS5 and tsvector through a
join), never by cutting a top-k afterwards. Paths compare case-sensitively; extensions do not.

- `under`: a folder or a file (absolute): the file itself or anything below the folder.
- `paths`: globs (`*`, `?`, `[...]`; `*` also crosses `/`). A glob without `/` matches
  the file name (`*.md`); one with `/` matches the end of the path (`tutorial/*.md`), or
  the whole path when it starts with `/`.
- `types`: file types (`md`, `rst`, `html`, `pdf`, `txt`, `office`, `epub`, `code`) or
  extensions (`.py`).
- `metadata` (`where`): conditions on a record's metadata (`lang=en`, `year>=2020`; see
  `indexer.store.where` for what they mean and how several combine); files have no
  metadata, so a `where` leaves them out.
- `words`: the phrases a passage must hold and the words it must not
  (`indexer.store.word_filter`): a condition on passages, which each backend adds to this
  one where it searches passages.
Within one kind any value may match; every kind given must match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from indexer.errors import InvalidQuery
from indexer.reading.formats import FILE_TYPES, longer_suffixes
from indexer.store.globs import check_glob, glob_regex
from indexer.store.where import WhereCondition, metadata_sql, where_conditions
from indexer.store.word_filter import WordFilter

MAX_FILTER_VALUES = 64
MAX_FILTER_CHARS = 4096


@dataclass(frozen=True)
class SearchFilter:
    """Folders (or files), globs, file types and metadata a search is limited to, and the
    words its passages must and must not hold (empty: no limit)."""

    under: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    metadata: tuple[WhereCondition, ...] = ()  # `where`, see `indexer.store.where`
    words: WordFilter = field(default_factory=WordFilter)

    def __bool__(self) -> bool:
        return self.limits_documents or bool(self.words)

    @property
    def limits_documents(self) -> bool:
        """Whether any condition is on documents (`sql` is more than TRUE)."""
        return bool(self.under or self.paths or self.types or self.metadata)

    def to_dict(self) -> dict[str, Any]:
        """The filter as JSON-ready lists: `where` an object of the keys asked to equal one
        value and nothing else (as before there were other conditions), `where_conditions`
        every condition as text (`year>=2020`); `phrases` and `excluded` the words, when
        there are any."""
        lone = {}
        for key in {condition.key for condition in self.metadata}:
            own = [condition for condition in self.metadata if condition.key == key]
            if len(own) == 1 and own[0].operator == "=" and not own[0].matches_nothing:
                lone[key] = own[0].given
        shown: dict[str, Any] = {
            "under": list(self.under),
            "path": list(self.paths),
            "type": list(self.types),
            "where": dict(sorted(lone.items())),
            "where_conditions": [str(condition) for condition in self.metadata],
        }
        if self.words:
            shown |= {"phrases": list(self.words.phrases), "excluded": list(self.words.excluded)}
        return shown

    def sql(self, dialect: str) -> tuple[str, dict[str, Any]]:
        """The condition on the `documents` table for `dialect` (`sqlite` or `postgresql`):
        SQL text with `:f_...` parameters, and their values. The same text runs through
        sqlite3 and through SQLAlchemy's `text()`. The `words` are not in it: each backend
        adds its own condition on `chunks` for them."""
        parts = [
            _under_sql(self.under),
            _paths_sql(self.paths, dialect),
            _types_sql(sorted({s for kind in self.types for s in suffixes_of(kind)})),
            *metadata_sql(self.metadata, dialect),
        ]
        conditions = [condition for condition, _values in parts if condition]
        values = {name: value for _condition, named in parts for name, value in named.items()}
        return " AND ".join(conditions) or "TRUE", values


def make_filter(
    under: list[str] | tuple[str, ...] | str | None = None,
    paths: list[str] | tuple[str, ...] | str | None = None,
    types: list[str] | tuple[str, ...] | str | None = None,
    where: object = None,
    words: WordFilter | None = None,
) -> SearchFilter:
    """A checked `SearchFilter` (`InvalidQuery` for a relative folder, an empty glob or
    one that can match nothing (`[z-a]`, see `indexer.store.globs`), an unknown type, a
    `where` that is not key=value pairs, or more values than `MAX_FILTER_VALUES`).
    `where` is a mapping or a list of `key=value` strings; `words` the phrases and
    exclusions a query's text asks for (`search.query_syntax`)."""
    under, paths, types = _values(under, "under"), _values(paths, "path"), _values(types, "type")
    for folder in under:
        if not folder.startswith("/"):
            raise InvalidQuery(f"--under needs an absolute path, not {folder!r}")
    for kind in types:
        suffixes_of(kind)
    for pattern in paths:
        check_glob(pattern)
    return SearchFilter(
        tuple(folder.rstrip("/") or "/" for folder in under),
        tuple(paths),
        tuple(types),
        where_conditions(where),
        words or WordFilter(),
    )


def suffixes_of(kind: str) -> tuple[str, ...]:
    """The extensions of a file type name, or of an extension given as `.py` or `py`."""
    name = kind.lower()
    if name in FILE_TYPES:
        return FILE_TYPES[name]
    suffix = name if name.startswith(".") else f".{name}"
    if re.fullmatch(r"\.[a-z0-9_+\-]{1,16}", suffix):
        return (suffix,)
    raise InvalidQuery(
        f"unknown file type {kind!r}: use {', '.join(FILE_TYPES)} or an extension such as .py"
    )


def _values(value: list[str] | tuple[str, ...] | str | None, name: str) -> list[str]:
    if value is None:
        return []
    values = [value] if isinstance(value, str) else list(value)
    if len(values) > MAX_FILTER_VALUES:
        raise InvalidQuery(f"at most {MAX_FILTER_VALUES} {name} filters")
    for item in values:
        if not isinstance(item, str) or not item.strip():
            raise InvalidQuery(f"a {name} filter must be a non-empty string")
        if len(item) > MAX_FILTER_CHARS or "\x00" in item:
            raise InvalidQuery(f"a {name} filter must be under {MAX_FILTER_CHARS} characters")
    return values


def _anchored(pattern: str) -> str:
    """The glob over the whole stored (absolute) path."""
    if pattern.startswith("/"):
        return pattern
    return "*/" + pattern


Condition = tuple[str, dict[str, str]]  # SQL text (empty: no condition) and its values


def _any(tests: list[str], values: dict[str, str]) -> Condition:
    """One condition that holds when any test does (parenthesised: conditions are ANDed)."""
    if not tests:
        return "", {}
    return "(" + " OR ".join(f"({test})" for test in tests) + ")", values


def _under_sql(folders: tuple[str, ...]) -> Condition:
    # substr, not LIKE: SQLite's LIKE ignores case, and a folder may hold % or _.
    tests, values = [], {}
    for n, folder in enumerate(folders):
        prefix = folder.rstrip("/") + "/"
        values |= {f"f_under{n}": folder, f"f_under{n}_prefix": prefix}
        tests.append(
            f"documents.path = :f_under{n} OR "
            f"substr(documents.path, 1, {len(prefix)}) = :f_under{n}_prefix"
        )
    return _any(tests, values)


def _paths_sql(patterns: tuple[str, ...], dialect: str) -> Condition:
    # SQLite's GLOB is case-sensitive and its `*` crosses `/`; PostgreSQL matches the
    # regex of GLOB's own reading of the glob (`indexer.store.globs`).
    operator = "GLOB" if dialect == "sqlite" else "~"
    wholes = [_anchored(pattern) for pattern in patterns]
    values = {
        f"f_path{n}": whole if dialect == "sqlite" else glob_regex(whole)
        for n, whole in enumerate(wholes)
    }
    return _any([f"documents.path {operator} :{name}" for name in values], values)


def _types_sql(suffixes: list[str]) -> Condition:
    tests, values = [], {}
    for n, suffix in enumerate(suffixes):
        values[f"f_type{n}"] = f"%{suffix}"
        test = f"lower(documents.path) LIKE :f_type{n}"
        for m, longer in enumerate(longer_suffixes(suffix, set(suffixes))):
            values[f"f_type{n}_not{m}"] = f"%{longer}"
            test += f" AND lower(documents.path) NOT LIKE :f_type{n}_not{m}"
        tests.append(test)
    return _any(tests, values)
