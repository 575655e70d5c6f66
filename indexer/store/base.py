"""The storage seam: the `Store` interface, whatever keeps the index, and its types.

A store keeps a whole index: its manifest, documents and chunks, one vector space per
encoder and a lexical space. Callers never see files, SQL dialects or FAISS: they

- take the writer lock (`store.writer(wait)`), then make one `change()`: remove
  documents, add documents with their chunks and each space's vectors, record new
  mtimes, find stored vectors by the content key of their passages (to reuse them).
  Leaving the change publishes all of it at once, or nothing (an exception, or a
  change that changed nothing). The store keeps SQL rows and vector ids in step.
- read through a `snapshot()`: a query's candidates from every space with all it weighs
  them by (`search`), then what its hits show (`shown`), all from one consistent state,
  even while a writer publishes.
- `describe()` (for `info`), `verify()` and `rebuild()` (for `repair`).

Two backends: a folder path is the embedded store (SQLite + FTS5 + FAISS files, see
`local/`); a `postgresql+psycopg://` URL is PostgreSQL + pgvector (see `postgres/`).
`indexer.store.backends` picks one for a target and opens it (`open_store`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Union

if TYPE_CHECKING:  # kept cheap to import: every command imports this module
    import numpy as np

    from indexer.reading.sources import Document
    from indexer.splitting.chunking import Chunk
    from indexer.store.completeness import Completeness
    from indexer.store.filters import SearchFilter
    from indexer.store.manifest import Manifest

# What `open_store` accepts: a folder (str or Path) or a database URL.
Target = Union[str, Path]  # noqa: UP007 (evaluated at run time on Python 3.10)
# (chunk id, score) pairs, best first.
Ranked = list[tuple[int, float]]
# Encodes chunk texts into one array of unit vectors per vector space (for `rebuild`).
SpaceEncoder = Callable[[list[str]], "dict[str, np.ndarray]"]
RebuildProgress = Callable[[int, int], None]
# What the spaces encode for a stored chunk, from its text and section trail (for
# `rebuild`: `indexer.splitting.model_input`; without one, the text alone).
ModelText = Callable[[str, "str | None"], str]
# Stored vectors by content key, then by space (see `Change.vectors_for`).
KeyedVectors = dict[str, "dict[str, np.ndarray]"]


@dataclass(frozen=True)
class StoredDocument:
    """What the store remembers of a file, to tell whether it changed."""

    id: int
    path: str
    size: int
    mtime_ns: int
    sha256: str
    host: str = ""
    metadata_json: str | None = None  # a record's metadata (JSON); None for a file
    # as the run that read the file saw them (None for a record, and in old rows)
    ctime_ns: int | None = None
    inode: int | None = None


@dataclass(frozen=True)
class StoredRecord:
    """What the store remembers of a record, to tell whether an upsert changes it."""

    document_id: int
    sha256: str
    metadata_json: str


@dataclass(frozen=True)
class StoredChunk:
    """A chunk with the path of its document, as search results need it."""

    id: int
    document_id: int
    path: str
    ordinal: int
    start: int
    end: int
    text: str
    host: str = ""
    line: int | None = None  # 1-based, in the file (see `indexer.reading.text_layout`)
    end_line: int | None = None
    heading: str | None = None
    page: int | None = None
    metadata_json: str | None = None  # its document's, when that is a record
    line_map: str | None = None  # JSON, HTML and PDF (see `indexer.reading.line_map`)
    section: str | None = None  # the trail of the section holding it (`Passage.section`)


@dataclass(frozen=True, eq=False)
class CandidateSearch:
    """What `Snapshot.search` looks for: one query's searches, each vector space of
    `vectors` with its query vector (one row), and the full text with `text` (None: no
    lexical search), each `depth` deep among the chunks of the documents `where` allows.

    `cosine` names a space and its query vector: every candidate outside that space's
    list gets its cosine there. With `complete_lexical`, every candidate outside the
    lexical list that holds a query term gets its BM25, looked up only when the list is
    `depth` long (a shorter one holds every such chunk)."""

    vectors: Mapping[str, np.ndarray] = field(default_factory=dict)
    text: str | None = None
    depth: int = 10
    where: SearchFilter | None = None
    cosine: tuple[str, np.ndarray] | None = None
    complete_lexical: bool = False

    def missing_scores(self, found: Candidates) -> tuple[list[int], list[int]]:
        """The candidates of `found` needing a cosine (outside the `cosine` space's list)
        and those needing BM25 (outside a lexical list `depth` long, when asked), in list
        order."""
        candidates = [chunk_id for ranked in found.vector.values() for chunk_id, _ in ranked]
        candidates += [chunk_id for chunk_id, _ in found.lexical or []]
        candidates = list(dict.fromkeys(candidates))
        cosines: list[int] = []
        if self.cosine is not None:
            listed = dict(found.vector.get(self.cosine[0], []))
            cosines = [chunk_id for chunk_id in candidates if chunk_id not in listed]
        bm25: list[int] = []
        lexical = found.lexical or []
        if self.complete_lexical and self.text is not None and len(lexical) >= self.depth:
            listed = dict(lexical)
            bm25 = [chunk_id for chunk_id in candidates if chunk_id not in listed]
        return cosines, bm25


@dataclass
class Candidates:
    """What `Snapshot.search` found: each side's list (chunk id, score; best first) and
    what the search weighs its candidates by."""

    vector: dict[str, Ranked]
    lexical: Ranked | None  # None when not searched
    # How many chunks each vector space could have listed: those `where` allows, or all
    # it holds (a list as long means the space is exhausted).
    sizes: dict[str, int]
    # The cosine in the `cosine` space of each candidate its list does not hold.
    cosines: dict[int, float]
    # The BM25 of each candidate outside the lexical list that holds a query term
    # (`complete_lexical`; empty when the lexical list is shorter than the depth).
    bm25: dict[int, float]
    chunks: dict[int, StoredChunk]  # every candidate's row
    content_keys: dict[int, str]  # by document id: each file's (records have none)
    # How many passages each candidate's file holds, by document id (records left out),
    # and how many the search could return: those `where` allows, or all. A file holding
    # a large share of them would crowd the first places (`search.large_documents`).
    passages: dict[int, int]
    searched: int


@dataclass(frozen=True)
class Copies:
    """The files holding one hit's text: (document id, path) of those `where` allows, in
    path order, its own included; and `first_passage`, the passage of the first of them
    at the hit's place with the hit's text, when that file is another (None otherwise,
    or when its passage there differs: a copy read as another type is cut otherwise)."""

    files: list[tuple[int, str]]
    first_passage: StoredChunk | None = None


@dataclass(frozen=True)
class TermEvidence:
    """What a hit's lexical match signal reads (`search.match`): how many chunks the index
    holds, how many hold each query term (by the lexical space's own tokenizer and
    stemmer), and which of the hits hold each (the chunks a search for that term alone
    scores)."""

    chunks: int
    counts: dict[str, int]
    holders: dict[str, set[int]]


@dataclass(frozen=True)
class ShownHits:
    """What `Snapshot.shown` read of some hits: the copies of each hit of a file (by chunk
    id), and the query terms' evidence over the hits."""

    copies: dict[int, Copies]
    terms: TermEvidence


@dataclass(frozen=True)
class NewDocument:
    """A document to add: its chunks, and each vector space's vectors of those chunks;
    `metadata` for a record (see `indexer.records.record`), None for a file. `unfilled`,
    when given, marks the chunks whose contextual vector is not given (their rows of it
    are not stored): the store records them, and the fill adds their vectors later."""

    document: Document
    chunks: list[Chunk]
    vectors: dict[str, np.ndarray]
    metadata: dict[str, Any] | None = None
    unfilled: np.ndarray | None = None  # one bool per chunk


@dataclass
class VerifyReport:
    """What `verify` found: problems (empty when consistent) and what it counted."""

    directory: str
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what could not be checked, and why

    @property
    def consistent(self) -> bool:
        """Whether no problem was found."""
        return not self.problems


class Change(Protocol):
    """One atomic change of the index, made by the writer inside `Store.change()`."""

    manifest: Manifest

    def remove_documents(self, document_ids: Iterable[int]) -> int:
        """Remove documents, their chunks and every space's entries; return the chunks removed."""
        ...

    def add_documents(self, documents: Sequence[NewDocument]) -> list[list[int]]:
        """Add documents with their chunks and vectors; return each one's new chunk ids."""
        ...

    def replace_document(self, document_id: int, new: NewDocument) -> list[int]:
        """Make the stored file document `document_id` (at `new`'s path) hold `new`: the
        passages whose text is unchanged keep their rows, ids and every space's entries,
        the others are removed and added; return each new chunk's id, in order."""
        ...

    def touch_document(self, document_id: int, document: Document) -> None:
        """Record the new mtime, ctime and inode of `document`, whose content is that of
        the stored document `document_id`."""
        ...

    def vectors_for(
        self, content_keys: Iterable[str], spaces: Sequence[str] | None = None
    ) -> KeyedVectors:
        """The vectors, in every space (or in `spaces`), of each of these content keys (see
        `indexer.store.content_keys`) that a chunk of the index has, those added in this
        change included, or that a chunk removed earlier in this change had; keys no
        chunk has are left out. A run copies them instead of encoding the text again."""
        ...

    def unfilled_chunks(self, limit: int) -> list[tuple[int, str, str | None]]:
        """The (id, text, section trail) of the `limit` lowest chunks whose contextual
        vector is not stored yet (added without one: see `NewDocument`)."""
        ...

    def unfilled_count(self) -> int:
        """How many chunks lack their contextual vector."""
        ...

    def filled_vectors_for(self, content_keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The contextual vector of each of these content keys that a chunk holding one
        has (the fill copies it instead of encoding the text again)."""
        ...

    def fill_contextual(self, chunk_ids: np.ndarray, vectors: np.ndarray) -> None:
        """Store the contextual vectors of the lowest unfilled chunks (`unfilled_chunks`,
        in order); none given: no chunk is left unfilled."""
        ...

    def set_index_type(self, index_type: str) -> None:
        """Switch the vector structure (exact or HNSW) from this change on."""
        ...

    def set_quantize(self, quantize: str) -> None:
        """Switch how the vector spaces are quantized from this change on."""
        ...

    def set_precision(self, precision: str) -> None:
        """Record the precision (fp32 or bf16) chunks are encoded in from this change on."""
        ...

    def move_document(self, document_id: int, document: Document) -> None:
        """Give a document whose file moved (same content) the new path, mtime, ctime and
        inode of `document`."""
        ...

    def record_root(self, root: Path, rules: str | None = None) -> None:
        """Remember that `root` was indexed as a root of its own, and the --exclude and
        --include rules of its runs (JSON, see `indexer.reading.rules`) when given."""
        ...

    def forget_root(self, root: Path | str) -> None:
        """Forget this host's root at `root` with its rules; its documents stay (they
        belong to the root above it now)."""
        ...

    def remove_path(self, path: Path) -> tuple[int, int, int]:
        """Remove this host's documents at `path` (a file) or under it (a folder) from
        every space and forget the roots there; (documents, chunks, roots) removed."""
        ...

    def find_records(self, record_ids: Iterable[str]) -> dict[str, StoredRecord]:
        """The stored records among these ids, by id."""
        ...

    def set_record_metadata(self, document_id: int, metadata: dict[str, Any]) -> None:
        """Replace a record's metadata (its text, chunks and vectors stay)."""
        ...


class Snapshot(Protocol):
    """One consistent state of the index, for reading."""

    manifest: Manifest

    def search(self, ask: CandidateSearch) -> Candidates:
        """A query's candidates from every side `ask` names, with all its search weighs
        and places them by: their rows, content keys and files' passage counts, each
        side's exact scores of the others' candidates, each vector space's size and the
        passages searched (see `CandidateSearch`, `Candidates`)."""
        ...

    def shown(
        self, chunk_ids: Sequence[int], terms: Sequence[str], where: SearchFilter | None = None
    ) -> ShownHits:
        """What these hits show: the files holding each one's text that `where` allows
        (with the first one's same passage), and the evidence of the query's `terms`
        over them (see `ShownHits`)."""
        ...

    def vector_search(
        self, space: str, queries: np.ndarray, k: int, where: SearchFilter | None = None
    ) -> list[Ranked]:
        """The `k` nearest chunks of each query row in a vector space (cosine, best first),
        among the chunks of the documents `where` allows (searched inside the space):
        what `search` lists for that space."""
        ...

    def lexical_search(self, query: str, k: int, where: SearchFilter | None = None) -> Ranked:
        """The best `k` chunks by full-text relevance (higher is better), among those of
        the documents `where` allows: what `search` lists for the full text."""
        ...

    def vectors(self, space: str, chunk_ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these chunks in a space, by chunk id (float32, as
        written; ids the space does not hold are left out). Nothing is encoded."""
        ...

    def chunk_count(self, where: SearchFilter | None = None) -> int:
        """How many chunks there are, or how many `where` allows."""
        ...

    def space_size(self, space: str) -> int:
        """How many vectors a space holds."""
        ...

    def chunks(self, chunk_ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks with these ids, with their documents' paths; unknown ids left out."""
        ...

    def document(self, document_id: int) -> tuple[StoredDocument, list[StoredChunk]] | None:
        """A document and its chunks in order, or None."""
        ...

    def documents_at(self, path: str) -> list[StoredDocument]:
        """The documents stored at exactly this path (a file's absolute path, or a
        record's `record:ID`), one per host that indexed it, by id."""
        ...

    def counts(self) -> dict[str, int]:
        """How many documents and chunks the index holds."""
        ...

    def completeness(self) -> Completeness:
        """How many passages the index holds, and how many of them have their contextual
        vector (all, but while a run fills them: `indexer.runs.fill`)."""
        ...

    def has_documents(self, where: SearchFilter) -> bool:
        """Whether any document (file or record) meets `where`."""
        ...

    def roots(self) -> list[str]:
        """The folders indexed as roots (every host's), sorted, each once."""
        ...

    def metadata_keys(self) -> list[str]:
        """The metadata keys that records hold, sorted, each once."""
        ...

    def metadata_values_ignoring_case(self, key: str, text: str) -> list[str]:
        """The stored value texts of `key` that equal `text` but for case, sorted."""
        ...


class Store(Protocol):
    """A whole index, whatever keeps it."""

    target: str  # where it is, fit to show (a folder, or a URL without its password)
    host: str  # whose documents `documents_under` sees
    manifest: Manifest | None  # None for a store whose first run has not published yet

    def writer(self, wait: bool = False) -> AbstractContextManager[None]:
        """Be the only writer (`IndexLocked`, or wait with `wait`); re-reads the manifest."""
        ...

    def initialise(self, manifest: Manifest) -> None:
        """Publish the manifest and empty spaces of a new index (writer only)."""
        ...

    def documents_under(self, root: Path) -> dict[str, StoredDocument]:
        """This host's documents at `root` (a root that is one file) or under it, by path,
        but those of roots nested in it."""
        ...

    def roots_under(self, root: Path) -> list[str]:
        """The roots indexed on their own strictly under `root` (this host's)."""
        ...

    def root_rules(self, root: Path) -> str | None:
        """The rules (JSON) remembered for this host's root `root`, or None."""
        ...

    def change(self) -> AbstractContextManager[Change]:
        """An atomic change (writer only): published when the block ends, or not at all."""
        ...

    def snapshot(self, spaces: Iterable[str] | None = None) -> AbstractContextManager[Snapshot]:
        """A consistent state to read from: every read sees the state of the first one
        (or of the snapshot's start: a store may take it there); `spaces` names the
        vector spaces it will search (default: all), which a store may load alone."""
        ...

    def describe(self) -> dict[str, Any]:
        """The manifest, the counts and the sizes of what the index keeps."""
        ...

    def verify(self) -> VerifyReport:
        """Cross-check the SQL rows, every vector space and the lexical space."""
        ...

    def rebuild(
        self,
        encode: SpaceEncoder,
        progress: RebuildProgress | None = None,
        model_text: ModelText | None = None,
    ) -> dict[str, int]:
        """Re-encode every stored chunk into fresh spaces and rebuild the lexical space;
        each chunk is encoded (and keyed) as `model_text` makes it from its text and trail."""
        ...

    def close(self) -> None:
        """Release connections and files."""
        ...


class Backend(Protocol):
    """One kind of target (a folder, a URL scheme): how to tell whether it holds an index,
    whether one may be made there, and how to open it (see `indexer.store.backends`)."""

    def normalise(self, target: Target) -> Target:
        """The target as a run records it (a folder as an absolute path)."""
        ...

    def exists(self, target: Target) -> bool:
        """Whether the target holds an index whose first run published (cheap)."""
        ...

    def check_can_create(self, target: Target) -> None:
        """Raise `IndexNotFound` unless a new index may be made at the target (nothing lost)."""
        ...

    def open(self, target: Target, create: bool = False, read_only: bool = False) -> Store:
        """The store at the target (`IndexNotFound` without `create` where there is none)."""
        ...
