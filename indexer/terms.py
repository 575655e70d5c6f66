"""The words of a query that lexical search and snippets look for (no SQL, no FAISS)."""

from __future__ import annotations

import re
from functools import lru_cache

from indexer.cjk import query_form

_WORD = re.compile(r"\w+")


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """English stop words (alphabetic entries of the `stop-words` package's list)."""
    from stop_words import get_stop_words

    return frozenset(word for word in get_stop_words("english") if word.isalpha())


def query_terms(query: str) -> list[str]:
    """The distinct lower-cased words of a query, stop words left out (unless that is all);
    a run of Chinese, Japanese or Korean characters gives its pairs (`indexer.cjk`)."""
    words = list(dict.fromkeys(word.lower() for word in _WORD.findall(query_form(query))))
    kept = [word for word in words if word not in stop_words()]
    return kept or words
