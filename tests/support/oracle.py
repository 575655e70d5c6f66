"""The oracle: what an index holds, as plain values, and the comparison of two indexes.

`index_fingerprint(target)` reads everything a user can get back from an index (its
documents, their chunks with texts and locations, every space's vector of every chunk,
the records and their metadata, the roots, and whether `verify` is consistent), on any
backend. `assert_same_index(a, b)` says where two fingerprints differ: documents and
chunks exactly, vectors by cosine (at least `MIN_COSINE`), matched by (path, ordinal),
since an index brought up to date and a fresh one give their chunks other ids.
`assert_same_hits(a, b)` asks both indexes the same queries in every mode and compares
the hits tie-tolerantly (equal scores may come in another order, chunk ids differ).

The fresh index to compare with is built by `build_fresh_index` from a `Replay`: the
roots the user indexed (with their remembered --exclude rules) and the records.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from indexer.store.backends import is_database_url, open_store, store_exists
from indexer.store.base import Target
from indexer.store.unfilled import unfilled_ids

MIN_COSINE = 0.9999
# How far scores of the same hit may be apart: vectors agree to a cosine of 0.9999 (the
# watch process encodes in bf16 where the CPU has it), which hybrid's adaptive fusion
# (z-scores weighted by each list's peak) can spread to a few thousandths.
SCORE_TOLERANCE = {"lexical": 1e-4, "static": 1e-3, "contextual": 1e-3, "hybrid": 1e-2}
QUERIES = ("river bank erosion", "coffee from java", "tower crane steel", "apple orchard")
MODES = ("lexical", "static", "contextual", "hybrid")
HITS = 5
# Which paths a comparison covers (all of them when None).
Domain = Callable[[str], bool] | None


@dataclass(frozen=True)
class ChunkPrint:
    """A chunk as a user gets it back: its place in the text, its text and location."""

    ordinal: int
    start: int
    end: int
    text: str
    line: int | None
    end_line: int | None
    heading: str | None
    page: int | None
    line_map: str | None  # HTML source lines, PDF page lines (`indexer.reading.line_map`)
    section: str | None


@dataclass(frozen=True)
class DocumentPrint:
    """A document: what identifies its content, and its chunks in order."""

    path: str
    size: int
    mtime_ns: int | None  # None for a record (stamped when upserted, not a file's)
    sha256: str
    metadata_json: str | None
    chunks: tuple[ChunkPrint, ...]
    text_sha256: str | None = None  # the hash of its extracted text (what copies share)


@dataclass
class IndexPrint:
    """Everything compared of one index."""

    target: str
    documents: dict[str, DocumentPrint] = field(default_factory=dict)
    # space -> (path, ordinal) -> unit vector
    vectors: dict[str, dict[tuple[str, int], np.ndarray]] = field(default_factory=dict)
    roots: tuple[str, ...] = ()
    pooling: str | None = None
    problems: tuple[str, ...] = ()  # what `verify` found, and vectors without a chunk
    # The chunks whose contextual vector the fill has not stored yet (`indexer.runs.fill`)
    unfilled: frozenset[tuple[str, int]] = frozenset()

    def within(self, domain: Domain) -> IndexPrint:
        """The same print, keeping only the documents (and vectors) `domain` covers."""
        if domain is None:
            return self
        return IndexPrint(
            self.target,
            {path: doc for path, doc in self.documents.items() if domain(path)},
            {
                space: {key: vector for key, vector in found.items() if domain(key[0])}
                for space, found in self.vectors.items()
            },
            self.roots,
            self.pooling,
            self.problems,
            frozenset(key for key in self.unfilled if domain(key[0])),
        )


_ROWS = (
    "SELECT d.path, d.size, d.mtime_ns, d.sha256, d.metadata_json, d.text_sha256, c.id, "
    'c.ordinal, c.start, c."end", c.text, c.line, c.end_line, c.heading, c.page, c.line_map, '
    "c.section "
    "FROM documents d LEFT JOIN chunks c ON c.document_id = d.id ORDER BY d.path, c.ordinal"
)


def index_fingerprint(target: Target) -> IndexPrint:
    """Read the whole index at `target` (an empty print when no index is there)."""
    from indexer.errors import CtxsearchError
    from indexer.store.backends import verify_target

    if not store_exists(target):
        return IndexPrint(str(target))
    try:
        store = open_store(target)
    except CtxsearchError as error:
        return IndexPrint(str(target), problems=(f"the index does not open: {error}",))
    try:
        with store.snapshot() as snapshot:  # both backends read SQL text (`SqlReads.rows`)
            read = snapshot.rows  # type: ignore[attr-defined]
            rows = read(_ROWS, {})
            roots = tuple(sorted(row[0] for row in read("SELECT path FROM roots", {})))
            spaces = _space_vectors(snapshot, target)
            manifest = snapshot.manifest
            unfilled_chunks = unfilled_ids(read, manifest.unfilled)
    finally:
        store.close()
    documents: dict[str, tuple[tuple, list[ChunkPrint]]] = {}
    key_of: dict[int, tuple[str, int]] = {}
    for path, size, mtime_ns, sha256, metadata_json, text_hash, chunk_id, ordinal, *chunk in rows:
        documents.setdefault(path, ((size, mtime_ns, sha256, metadata_json, text_hash), []))
        if chunk_id is not None:
            documents[path][1].append(ChunkPrint(ordinal, *chunk))
            key_of[chunk_id] = (path, ordinal)
    problems = list(verify_target(target).problems)
    vectors: dict[str, dict[tuple[str, int], np.ndarray]] = {}
    for space, (ids, matrix) in spaces.items():
        vectors[space] = {}
        for chunk_id, vector in zip(ids.tolist(), matrix, strict=True):
            if chunk_id not in key_of:
                problems.append(f"{space}: a vector with no chunk (id {chunk_id})")
                continue
            vectors[space][key_of[chunk_id]] = np.asarray(vector, dtype=np.float64)
        missing = set(key_of.values()) - set(vectors[space])
        if space == "contextual":  # the fill's to add, not lost
            missing -= {key_of[chunk_id] for chunk_id in unfilled_chunks if chunk_id in key_of}
        problems += [f"{space}: no vector for chunk {key}" for key in sorted(missing)]
    return IndexPrint(
        target=str(target),
        documents={
            path: DocumentPrint(
                path=path,
                size=size,
                mtime_ns=mtime_ns if metadata_json is None else None,
                sha256=sha256,
                metadata_json=metadata_json,
                chunks=tuple(chunks),
                text_sha256=text_hash,
            )
            for path, ((size, mtime_ns, sha256, metadata_json, text_hash), chunks) in (
                documents.items()
            )
        },
        vectors=vectors,
        roots=roots,
        pooling=manifest.pooling,
        problems=tuple(problems),
        unfilled=frozenset(key_of[chunk_id] for chunk_id in unfilled_chunks if chunk_id in key_of),
    )


def _space_vectors(snapshot, target: Target) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each space's (chunk ids, vectors), read from the snapshot's own state."""
    if not is_database_url(target):
        return {name: space.live_vectors() for name, space in snapshot.spaces.items()}
    from sqlalchemy import select

    from indexer.store.postgres.vectors import space_table

    found = {}
    for name in snapshot.manifest.spaces:
        table = space_table(name, snapshot.manifest.dim_of(name))
        rows = snapshot.connection.execute(select(table.c.chunk_id, table.c.embedding)).all()
        ids = np.asarray([chunk_id for chunk_id, _ in rows], dtype=np.int64)
        dim = snapshot.manifest.dim_of(name)
        matrix = np.asarray([vector for _, vector in rows], dtype=np.float32).reshape(-1, dim)
        found[name] = (ids, matrix)
    return found


def differences(
    actual: IndexPrint, expected: IndexPrint, domain: Domain = None, filling: bool = False
) -> list[str]:
    """Where `actual` differs from `expected` among the documents `domain` covers
    (empty when they are the same index); both must also have no problems. With
    `filling`, `actual` may be a state the fill published before its end: some passages
    without their contextual vector yet, the others' as the oracle's."""
    actual, expected = actual.within(domain), expected.within(domain)
    found = [f"{actual.target}: {problem}" for problem in actual.problems]
    if actual.unfilled and not filling:
        found.append(f"{actual.target}: {len(actual.unfilled)} passages still to fill")
    found += [f"{expected.target} (the oracle): {problem}" for problem in expected.problems]
    for path in sorted(expected.documents.keys() - actual.documents.keys()):
        found.append(f"missing document {path}")
    for path in sorted(actual.documents.keys() - expected.documents.keys()):
        found.append(f"extra document {path}")
    for path in sorted(actual.documents.keys() & expected.documents.keys()):
        found += _document_differences(actual.documents[path], expected.documents[path])
    for space in sorted(expected.vectors.keys() | actual.vectors.keys()):
        found += _vector_differences(
            space, actual.vectors.get(space, {}), expected.vectors.get(space, {}), actual, expected
        )
    return found


def _document_differences(actual: DocumentPrint, expected: DocumentPrint) -> list[str]:
    found = []
    for name in ("size", "mtime_ns", "sha256", "metadata_json", "text_sha256"):
        if getattr(actual, name) != getattr(expected, name):
            found.append(
                f"{actual.path}: {name} {getattr(actual, name)!r} != {getattr(expected, name)!r}"
            )
    if len(actual.chunks) != len(expected.chunks):
        found.append(f"{actual.path}: {len(actual.chunks)} chunks != {len(expected.chunks)}")
    for mine, theirs in zip(actual.chunks, expected.chunks, strict=False):
        if mine != theirs:
            found.append(f"{actual.path}: chunk {mine} != {theirs}")
            break
    return found


def _vector_differences(
    space: str,
    actual: dict[tuple[str, int], np.ndarray],
    expected: dict[tuple[str, int], np.ndarray],
    actual_print: IndexPrint,
    expected_print: IndexPrint,
) -> list[str]:
    """Vectors of the chunks both prints hold (missing chunks are reported elsewhere)."""
    found = []
    for key in sorted(actual.keys() & expected.keys()):
        cosine = float(np.dot(actual[key], expected[key]))
        cosine /= max(np.linalg.norm(actual[key]) * np.linalg.norm(expected[key]), 1e-12)
        if not cosine >= MIN_COSINE:
            found.append(
                f"{space} vector of {key[0]} chunk {key[1]}: cosine {cosine:.6f} to the oracle's "
                f"(pooling {actual_print.pooling} here, {expected_print.pooling} there)"
            )
    return found


# What `passage_mismatches`'s `text_of` says of a file of data: no document may be there.
DATA = "\0data"


def passage_mismatches(stored: IndexPrint, text_of: Callable[[str], str | None]) -> list[str]:
    """The passages of `stored` whose text is not their document's text at their offsets,
    `text_of(path)` being that text (a record's, a file's as its reader reads it; None:
    not known, not checked; `DATA`: a file of data, which has no document at all). This
    holds of any index, whatever a fresh one holds: it is checked against the files."""
    found = []
    for path, document in stored.documents.items():
        text = text_of(path)
        if text is None:
            continue
        if text == DATA:
            found.append(f"{path}: a document for a file of data (skipped when read)")
            continue
        for chunk in document.chunks:
            there = text[chunk.start : chunk.end]
            if there != chunk.text:
                at = next(
                    (n for n, (a, b) in enumerate(zip(there, chunk.text, strict=False)) if a != b),
                    min(len(there), len(chunk.text)),
                )
                found.append(
                    f"{path}: passage {chunk.ordinal} at [{chunk.start}, {chunk.end}) holds "
                    f"...{chunk.text[max(at - 20, 0) : at + 40]!r}... from its character {at}, "
                    f"the text there ...{there[max(at - 20, 0) : at + 40]!r}..."
                )
                break
    return found


def assert_same_index(actual: IndexPrint, expected: IndexPrint, domain: Domain = None) -> None:
    """Fail, saying every difference, unless `actual` holds what `expected` holds."""
    found = differences(actual, expected, domain)
    assert not found, "the index differs from the oracle:\n  " + "\n  ".join(found[:40])


# -- queries ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """What is compared of one hit: where it is, and its score."""

    path: str
    start: int
    end: int
    score: float


def query_hits(target: Target, queries: Iterable[str] = QUERIES) -> dict[tuple[str, str], list]:
    """Each (query, mode)'s hits from the index at `target` (torch query encoders: the
    reference, the same in every process)."""
    from search.engine import Searcher

    with Searcher(target, query_encoder="torch") as searcher:
        return {
            (query, mode): [
                Hit(hit.path, hit.start, hit.end, hit.score)
                for hit in searcher.search(query, k=HITS, mode=mode).results
            ]
            for query in queries
            for mode in MODES
        }


def hit_differences(actual: list[Hit], expected: list[Hit], tolerance: float) -> list[str]:
    """How two hit lists differ, tolerating ties: equal scores (within `tolerance`) may
    come in any order, and at the last score (the cut at k) by other hits."""
    if len(actual) != len(expected):
        return [f"{len(actual)} hits != {len(expected)}"]
    found = []
    for mine, theirs in zip(actual, expected, strict=True):
        if not math.isclose(mine.score, theirs.score, abs_tol=tolerance):
            found.append(f"score {mine.score:.5f} of {mine.path} != {theirs.score:.5f}")
            return found
    cuts = _clear_cuts(actual, expected, tolerance)
    for start, end in itertools.pairwise(cuts):
        mine, theirs = _places(actual[start:end]), _places(expected[start:end])
        if mine != theirs:
            found.append(f"hits {sorted(mine)} != {sorted(theirs)}")
    return found


def _clear_cuts(actual: list[Hit], expected: list[Hit], tolerance: float) -> list[int]:
    """The positions before which both lists hold the same hits whatever the order of
    ties: where each list's score drops by more than `tolerance` (a list's own tie groups
    would not do: scores a hair apart chain into groups of different lengths in each)."""

    def drops(hits: list[Hit], at: int) -> bool:
        return not math.isclose(hits[at].score, hits[at - 1].score, abs_tol=tolerance)

    inner = [at for at in range(1, len(expected)) if drops(actual, at) and drops(expected, at)]
    return [0, *inner]


def _places(hits: list[Hit]) -> set[tuple[str, int, int]]:
    return {(hit.path, hit.start, hit.end) for hit in hits}


def assert_same_hits(actual: Target, expected: Target, queries: Iterable[str] = QUERIES) -> None:
    """Fail unless both indexes answer every query in every mode with the same hits."""
    mine, theirs = query_hits(actual, queries), query_hits(expected, queries)
    found = []
    for key in theirs:
        tolerance = SCORE_TOLERANCE[key[1]]
        found += [f"{key}: {d}" for d in hit_differences(mine[key], theirs[key], tolerance)]
    assert not found, "the hits differ from the oracle's:\n  " + "\n  ".join(found[:20])


# -- the fresh index -------------------------------------------------------------------


@dataclass
class Replay:
    """What a user did that a fresh index must do again: the roots indexed on their own,
    each with its remembered --exclude patterns, and the records (id -> text, metadata)."""

    roots: dict[Path, tuple[str, ...]] = field(default_factory=dict)
    records: dict[str, tuple[str, dict]] = field(default_factory=dict)
    pooling: str = "mean"

    def live_roots(self) -> list[Path]:
        """The roots whose folders exist (a symlink to a folder is one), deepest first: a
        nested root is indexed before the root it is in, so no run of a folder ever has
        to cover a nested root."""
        live = [root for root in self.roots if root.is_dir()]
        return sorted(live, key=lambda root: (-len(root.parts), str(root)))


def build_fresh_index(target: Target, replay: Replay, model: str, precision: str) -> Target:
    """A new index at `target` holding what `replay` says, read from the folders as they
    are now (each root once, with its rules; the records in one upsert), each run
    publishing its contextual vectors with the rest (no fill after it)."""
    from indexer import Indexer

    indexer = Indexer(
        target, model=model, pooling=replay.pooling, precision=precision, fill_batch_chunks=0
    )
    for root in replay.live_roots():
        exclude = replay.roots[root]
        indexer.index_folder(root, exclude=list(exclude), allow_empty=True)
    if replay.records:
        indexer.upsert_records(
            [
                {"id": record_id, "text": text, "metadata": metadata}
                for record_id, (text, metadata) in sorted(replay.records.items())
            ]
        )
    return target
