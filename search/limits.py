"""What a query and a document id may be: types, bounds and lengths, checked once for
the Python API, the command line and HTTP alike (cheap to import: no FAISS, no torch).

Every refusal is `InvalidQuery` (exit 2 on the command line, 422 over HTTP).
"""

from __future__ import annotations

import re
import unicodedata
from numbers import Integral

from indexer.errors import InvalidQuery
from search.modes import MODES, Mode

# At most this many results per query: enough for any reader (evaluation asks for 100),
# small enough that hydrating and sending them stays cheap.
MAX_K = 1000
# At most this many characters per query: the model reads 256 tokens (about 1,000
# characters of English) and BM25 ORs every distinct word, so longer text only costs time.
MAX_QUERY_CHARS = 4000
# At most this many queries in one batch (`Searcher.search_batch`, `POST /search/batch`):
# the most the query encoder takes in one pass (`search.batching.MAX_BATCH`).
MAX_BATCH_QUERIES = 64
# Document ids are SQL row ids: whole numbers from 1 to the largest signed 64-bit integer.
MAX_DOCUMENT_ID = 2**63 - 1

_SURROGATE = re.compile("[\ud800-\udfff]")
# Letters and symbols that draw nothing: Hangul fillers and the blank Braille pattern.
_BLANK_GLYPHS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def check_query(query: object, k: object, mode: object, all_chunks: object = False) -> Mode:
    """The mode to search in, once the query text and its options are known to be usable."""
    if not isinstance(query, str):
        raise InvalidQuery(f"the query must be text (str), not {type(query).__name__}")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQuery(
            f"the query is {len(query):,} characters long; the most is {MAX_QUERY_CHARS:,}"
        )
    if _SURROGATE.search(query):
        raise InvalidQuery("the query is not valid Unicode text (it holds a lone surrogate)")
    if not has_visible_text(query):
        raise InvalidQuery("the query is empty")
    check_k(k)
    if not isinstance(mode, str) or mode not in MODES:
        raise InvalidQuery(f"unknown mode {mode!r}: choose one of {', '.join(MODES)}")
    if not isinstance(all_chunks, bool):
        raise InvalidQuery(f"all_chunks must be True or False, not {all_chunks!r}")
    return Mode(mode)


def check_k(k: object) -> int:
    """`k` as an int, if it is a whole number of results from 1 to `MAX_K`."""
    if isinstance(k, bool) or not isinstance(k, Integral):
        raise InvalidQuery(f"k must be a whole number of results, not {k!r}")
    if k <= 0:
        raise InvalidQuery(f"k must be a positive number of results, not {k}")
    if k > MAX_K:
        raise InvalidQuery(f"k must be at most {MAX_K}, not {k}")
    return int(k)


def check_dense_weight(dense_weight: object, mode: Mode) -> None:
    """That a fixed dense weight, if given, is a number from 0 to 1 and `mode` is hybrid."""
    if dense_weight is None:
        return
    if mode is not Mode.HYBRID:
        raise InvalidQuery(f"a dense weight only applies to hybrid mode, not to {mode}")
    if isinstance(dense_weight, bool) or not isinstance(dense_weight, (int, float)):
        raise InvalidQuery(f"the dense weight must be a number, not {dense_weight!r}")
    if not 0.0 <= dense_weight <= 1.0:
        raise InvalidQuery(f"the dense weight must be between 0 and 1, not {dense_weight}")


def check_min_similarity(value: object) -> None:
    """That a minimum similarity, if given, is a number from -1 to 1 (not NaN)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise InvalidQuery(f"the minimum similarity must be a number, not {value!r}")
    if not -1.0 <= value <= 1.0:
        raise InvalidQuery(f"the minimum similarity must be between -1 and 1, not {value}")


def check_document_id(document_id: object) -> int:
    """The id as an int, if it can name a document at all (1 to 2**63 - 1)."""
    if isinstance(document_id, bool) or not isinstance(document_id, Integral):
        raise InvalidQuery(f"a document id is a whole number, not {document_id!r}")
    if not 1 <= document_id <= MAX_DOCUMENT_ID:
        raise InvalidQuery(
            f"document ids run from 1 to {MAX_DOCUMENT_ID}; {document_id} cannot name one"
        )
    return int(document_id)


def has_visible_text(text: str) -> bool:
    """Whether `text` has a character that draws something: a letter, digit, punctuation
    or symbol. Spaces, control and format characters (zero-width space, joiners,
    direction marks), lone combining marks, private-use and unassigned code points do not
    count, so a query made of them alone is empty."""
    return any(
        unicodedata.category(character)[0] in "LNPS" and character not in _BLANK_GLYPHS
        for character in text
    )


def check_queries(queries: object) -> list:
    """The queries of a batch as a list: one to `MAX_BATCH_QUERIES` of them (each is
    checked as a search's query)."""
    if isinstance(queries, (str, bytes)) or not isinstance(queries, (list, tuple)):
        raise InvalidQuery(f"queries must be a list of query texts, not {type(queries).__name__}")
    if not queries:
        raise InvalidQuery("a batch needs at least one query")
    if len(queries) > MAX_BATCH_QUERIES:
        raise InvalidQuery(f"at most {MAX_BATCH_QUERIES} queries in one batch, not {len(queries)}")
    return list(queries)
