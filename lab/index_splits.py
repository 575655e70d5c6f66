"""Fusion-tuning splits of a folder of documents, measured the way search reads it.

The lab's corpus cache encodes each document whole, cut to the model's window, as the
published MTEB figures do: right for abstracts, wrong for long pages, which search reads
as chunks. So a document folder is indexed by the product's own `Indexer` (kept in the
work directory and brought up to date incrementally, so a second run re-encodes
nothing), and each query's two lists, `MAX_DEPTH` chunks deep, and the exact scores
hybrid search looks up (`search.completion`) come from that index. A document is ranked
where its first chunk is, as search shows one hit per document.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.spaces import Space
from search.completion import exact_scores

if TYPE_CHECKING:
    from lab.splits import Split


def index_dir_of(folder: Path, work_dir: Path | None = None, model: str | None = None) -> Path:
    """Where the lab keeps the index of a document folder made with a model."""
    from indexer.config import eval_cache_dir
    from indexer.encoders.loading import canonical_model_name

    folder = Path(folder).absolute()
    named = f"{folder}\0{canonical_model_name(model)}"
    key = hashlib.sha256(named.encode()).hexdigest()[:12]
    return Path(work_dir or eval_cache_dir()) / f"index-{folder.name}-{key}"


def load_index_split(
    folder: Path,
    split: str,
    eval_only: bool = False,
    work_dir: Path | None = None,
    model: str | None = None,
) -> Split:
    """Both sides' chunk lists, and the exact scores, for every judged query of a split
    (the folder indexed with `model`, by default all-MiniLM-L6-v2)."""
    from indexer import Indexer
    from lab.splits import MAX_DEPTH, Split
    from search.engine import Searcher
    from search.judged.collection import load_retrieval_dataset

    folder = Path(folder).absolute()
    dataset = load_retrieval_dataset(folder, split)
    target = index_dir_of(folder, work_dir, model)
    Indexer(target, model=model).index_folder(folder)
    query_ids = list(dataset.queries)
    texts = [dataset.queries[query_id] for query_id in query_ids]
    dense, lexical, cosines, bm25 = {}, {}, {}, {}
    document_of: dict[int, str] = {}
    sections: dict[int, str | None] = {}
    with Searcher(target) as searcher:
        vectors = searcher.encoders()[Space.CONTEXTUAL.value].encode(texts)
        with searcher.store.snapshot() as snapshot:
            found = snapshot.vector_search(Space.CONTEXTUAL.value, vectors, MAX_DEPTH)
            for query_id, text, vector, ranked in zip(
                query_ids, texts, vectors, found, strict=True
            ):
                dense[query_id] = ranked
                lexical[query_id] = snapshot.lexical_search(text, MAX_DEPTH)
                cosines[query_id], bm25[query_id] = exact_scores(
                    snapshot, text, vector, ranked, lexical[query_id], MAX_DEPTH
                )
                rows = {row for pairs in (ranked, lexical[query_id]) for row, _ in pairs}
                rows |= cosines[query_id].keys() | bm25[query_id].keys()
                for row, chunk in snapshot.chunks(rows - document_of.keys()).items():
                    relative = Path(chunk.path).relative_to(folder).with_suffix("")
                    document_of[row] = relative.as_posix()
                    sections[row] = chunk.section
    return Split(
        dataset.name,
        split,
        eval_only,
        dense,
        lexical,
        document_of,
        dataset.qrels,
        cosines,
        bm25,
        dict(zip(query_ids, texts, strict=True)),
        sections=sections,
    )
