"""Which documents a search may return: by folder, by path glob, by file type, by metadata.

A `SearchFilter` becomes one SQL condition on the `documents` table, the same meaning on
every dialect, so each backend applies it inside its searches (FAISS through an id
selector of the allowed chunks, pgvector, FTS5 and tsvector through a join), never by
cutting a top-k afterwards. Paths compare case-sensitively; extensions do not.

- `under`: a folder or a file (absolute): the file itself or anything below the folder.
- `paths`: globs (`*`, `?`, `[...]`; `*` also crosses `/`). A glob without `/` matches
  the file name (`*.md`); one with `/` matches the end of the path (`tutorial/*.md`), or
  the whole path when it starts with `/`.
- `types`: file types (`md`, `rst`, `html`, `pdf`, `txt`, `office`, `epub`, `code`) or
  extensions (`.py`).
- `metadata` (`where`): keys whose value a record's metadata must hold, each with the
  value texts that match (a number given as text matches as that number and as that
  text: see `indexer.record_input`); files have no metadata, so a `where` leaves them out.
Within one kind any value may match; every kind given must match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from indexer.errors import InvalidQuery
from indexer.file_types import FILE_TYPES
from indexer.record_input import where_pairs
from indexer.store.globs import check_glob, glob_regex

if TYPE_CHECKING:  # SQLAlchemy is imported only to search with a filter: a query process
    # without one reads through the light reader, which never imports it
    from sqlalchemy import ColumnElement

MAX_FILTER_VALUES = 64
MAX_FILTER_CHARS = 4096


@dataclass(frozen=True)
class SearchFilter:
    """Folders (or files), globs and file types a search is limited to (empty: no limit)."""

    under: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    metadata: tuple[tuple[str, tuple[str, ...]], ...] = ()  # `where`: (key, value texts)

    def __bool__(self) -> bool:
        return bool(self.under or self.paths or self.types or self.metadata)

    def to_dict(self) -> dict[str, list[str] | dict[str, str]]:
        """The filter as JSON-ready lists (and `where` as an object of the values given)."""
        return {
            "under": list(self.under),
            "path": list(self.paths),
            "type": list(self.types),
            "where": {key: texts[0] for key, texts in self.metadata},
        }

    def clause(self, dialect: str) -> ColumnElement[bool]:
        """The SQL condition on `documents` for `dialect` (`sqlite` or `postgresql`)."""
        from sqlalchemy import and_, func, or_, select, true

        from indexer.store.schema import DocumentRow, RecordMetadataRow

        parts = []
        if self.under:
            parts.append(or_(*(_under(folder) for folder in self.under)))
        if self.paths:
            parts.append(or_(*(_glob(pattern, dialect) for pattern in self.paths)))
        if self.types:
            suffixes = sorted({s for kind in self.types for s in suffixes_of(kind)})
            lowered = func.lower(DocumentRow.path)
            parts.append(or_(*(lowered.like(f"%{suffix}") for suffix in suffixes)))
        for key, texts in self.metadata:
            holding = select(RecordMetadataRow.document_id).where(
                RecordMetadataRow.key == key, RecordMetadataRow.value.in_(texts)
            )
            parts.append(DocumentRow.id.in_(holding))
        return and_(*parts) if parts else true()

    def sqlite_chunk_ids(self) -> tuple[str, list]:
        """The SQLite query of the ids of the chunks this filter allows, in order, with its
        positional parameters: `clause("sqlite")` written out for the light reader, which
        runs plain sqlite3 (importing SQLAlchemy to compile it cost a quarter second per
        query process; a test keeps the two equal)."""
        parts: list[str] = []
        parameters: list = []
        if self.under:
            tests = []
            for folder in self.under:
                prefix = folder.rstrip("/") + "/"
                tests.append("(d.path = ? OR substr(d.path, 1, ?) = ?)")
                parameters += [folder, len(prefix), prefix]
            parts.append("(" + " OR ".join(tests) + ")")
        if self.paths:
            parts.append("(" + " OR ".join("d.path GLOB ?" for _ in self.paths) + ")")
            parameters += [_anchored(pattern) for pattern in self.paths]
        if self.types:
            suffixes = sorted({s for kind in self.types for s in suffixes_of(kind)})
            parts.append("(" + " OR ".join("lower(d.path) LIKE ?" for _ in suffixes) + ")")
            parameters += [f"%{suffix}" for suffix in suffixes]
        for key, texts in self.metadata:
            values = ", ".join("?" for _ in texts)
            parts.append(
                "d.id IN (SELECT document_id FROM record_metadata "
                f"WHERE key = ? AND value IN ({values}))"
            )
            parameters += [key, *texts]
        condition = " AND ".join(parts) or "1"
        sql = (
            "SELECT c.id FROM chunks c JOIN documents d ON c.document_id = d.id "
            f"WHERE {condition} ORDER BY c.id"
        )
        return sql, parameters


def make_filter(
    under: list[str] | tuple[str, ...] | str | None = None,
    paths: list[str] | tuple[str, ...] | str | None = None,
    types: list[str] | tuple[str, ...] | str | None = None,
    where: object = None,
) -> SearchFilter:
    """A checked `SearchFilter` (`InvalidQuery` for a relative folder, an empty glob or
    one that can match nothing (`[z-a]`, see `indexer.store.globs`), an unknown type, a
    `where` that is not key=value pairs, or more values than `MAX_FILTER_VALUES`).
    `where` is a mapping or a list of `key=value` strings."""
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
        where_pairs(where),
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


def _under(folder: str) -> ColumnElement[bool]:
    from sqlalchemy import func, or_

    from indexer.store.schema import DocumentRow

    prefix = folder.rstrip("/") + "/"
    # substr, not LIKE: SQLite's LIKE ignores case, and a folder may hold % or _.
    return or_(DocumentRow.path == folder, func.substr(DocumentRow.path, 1, len(prefix)) == prefix)


def _anchored(pattern: str) -> str:
    """The glob over the whole stored (absolute) path."""
    if pattern.startswith("/"):
        return pattern
    return "*/" + pattern


def _glob(pattern: str, dialect: str) -> ColumnElement[bool]:
    from indexer.store.schema import DocumentRow

    whole = _anchored(pattern)
    if dialect == "sqlite":
        return DocumentRow.path.op("GLOB")(whole)  # case-sensitive, * crosses /
    return DocumentRow.path.op("~")(glob_regex(whole))
