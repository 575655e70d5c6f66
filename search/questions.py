"""Whether a query is phrased as a question ("how do I ...", "why does ...", "...?").

Hybrid search leans towards the contextual side for questions (see `search.fusion`): a
question describes a need in the asker's words, which are seldom the document's, so
matching its words finds passages that share "run", "file" or "response" rather than
the answer, while the model was trained on questions and the passages answering them.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")  # the first word: "where's" opens with "where"
# Words that open an English question: wh-words and the auxiliaries of yes/no questions.
_OPENER_WORDS = (
    "how why what when where which who whom whose can could do does did is are was were "
    "will would should shall may might must has have had"
)
OPENERS = frozenset(_OPENER_WORDS.split())


def is_question(query: str) -> bool:
    """True if the query ends with '?' or opens with a question word."""
    if query.rstrip().endswith("?"):
        return True
    first = _WORD.search(query)
    return first is not None and first.group().lower() in OPENERS
