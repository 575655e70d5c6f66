"""The query syntax people expect from a search box, the same in every mode and at every
edge: `"a phrase"` must be in the passage, `-word` (or `-"a phrase"`) must not.

- A phrase is the text between a pair of double quotes. The passage must hold its words
  adjacent and in order, as the lexical space splits and stems them (`"hinted handoff"`
  holds in "hinted handoff" and "hinted, handoff", not in "handoff hinted"). A quote
  without a pair (the last of an odd number) is an ordinary character.
- An exclusion is a `-` at the start of the query or after a space, followed by a word
  that starts with a letter (up to the next space or quote: `-e-mail` excludes "e mail")
  or by a quoted phrase. A `-` inside a word (`e-mail`, `co-cultured`), before a digit
  (`-40`) or before a space is text.
- What the query looks for (the dense side's vector, the lexical side's terms, the
  snippets' marks) is its text with the quotes and the exclusions taken out:
  `"hinted handoff" -paxos` looks for `hinted handoff` in passages holding that phrase and
  not the word paxos. A query with nothing left to look for (exclusions alone) is
  `InvalidQuery`.
- `literal` (`--literal`) reads the text as it is: no phrases, no exclusions, for text
  written elsewhere (a pasted sentence, a judged collection's queries), whose quotes are
  quotations.

Phrases and exclusions become the words of the search's filter (`WordFilter`): each
backend applies them inside every space it searches, so `k` hits come whenever `k`
passages qualify, as with any filter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from indexer.errors import InvalidQuery
from indexer.store.word_filter import WordFilter
from search.limits import has_visible_text

# In order of preference at one place: an excluded phrase, a phrase, an excluded word.
_SYNTAX = re.compile(
    r'(?:(?<=\s)|^)-"(?P<excluded_phrase>[^"]*)"'
    r'|"(?P<phrase>[^"]*)"'
    r'|(?:(?<=\s)|^)-(?P<excluded_word>[^\W\d][^\s"]*)'
)
# A phrase or exclusion the lexical space can read: one with a letter or a digit.
_READABLE = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class QueryText:
    """A query read: what it looks for, and the words its passages must and must not hold."""

    searched: str
    words: WordFilter


def read_query(query: str, literal: bool = False) -> QueryText:
    """The query's `searched` text and `words` (see the module; `InvalidQuery` when
    nothing is left to look for); `literal`: the text as it is, without phrases or
    exclusions (a query written elsewhere, whose quotes are quotations)."""
    if literal or not _SYNTAX.search(query):
        return QueryText(query, WordFilter())
    phrases: list[str] = []
    excluded: list[str] = []

    def take(found: re.Match[str]) -> str:
        phrase = found.group("phrase")
        if phrase is not None:
            phrases.append(" ".join(phrase.split()))
            return f" {phrase} "
        excluded.append(found.group("excluded_phrase") or found.group("excluded_word") or "")
        return " "

    searched = " ".join(_SYNTAX.sub(take, query).split())
    if not has_visible_text(searched):
        raise InvalidQuery(
            f"nothing to search for in {query.strip()!r}: add a word or a phrase to look for "
            "(a -word only excludes)"
        )
    return QueryText(searched, WordFilter(_readable(phrases), _readable(excluded)))


def _readable(texts: list[str]) -> tuple[str, ...]:
    """The texts with a letter or digit, each once, in order."""
    return tuple(dict.fromkeys(text for text in texts if _READABLE.search(text)))
