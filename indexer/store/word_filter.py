"""Which passages a search may return by their words: the phrases each must hold, and the
words or phrases none may hold (a query's `"quoted phrase"` and `-word`, read by
`search.query_syntax`).

A phrase is held as the lexical space reads text: its words split and stemmed by the
lexical tokenizer, adjacent and in order (`"hinted handoff"` holds in "hinted handoff"
and in "hinted, handoff", not in "handoff hinted"). Each backend turns a `WordFilter`
into its own full-text condition on `chunks` (FTS5 `MATCH` on the embedded store,
a tsquery on PostgreSQL, whose tokens are FTS5's: `postgres/fts5_tokens.py`), applied
inside every space searched like the filters on documents (`indexer.store.filters`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WordFilter:
    """Phrases a passage must hold (all of them) and words or phrases it must not hold
    (any of them); empty: no condition."""

    phrases: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.phrases or self.excluded)
