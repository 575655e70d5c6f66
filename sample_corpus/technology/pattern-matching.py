"""Finding text patterns with regular expressions.

This small module explains how to search a string for every place where a
pattern occurs. A regular expression is a compact description of a set of
strings: ``\\d+`` means "one or more digits", ``[A-Z]\\w*`` means "a capital
letter followed by word characters". Python's built-in ``re`` module compiles
such a description into a matcher that scans text quickly.

Three functions cover most needs:

* ``re.search`` returns the first match anywhere in the string, or ``None``.
* ``re.fullmatch`` succeeds only if the whole string fits the pattern,
  which is what you want when validating input such as a postcode.
* ``re.finditer`` yields every non-overlapping match, each with its start
  and end position, so you can highlight all occurrences in a document.
"""

import re

# Compile once and reuse: compiling a pattern inside a loop wastes time.
DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def find_all_dates(text):
    """Return a list of (year, month, day) tuples for every ISO date in text.

    Groups in parentheses capture parts of each match; ``match.groups()``
    returns them in order, which saves slicing the string by hand.
    """
    return [m.groups() for m in DATE.finditer(text)]


def highlight(text, word):
    """Wrap every whole-word, case-insensitive occurrence of word in brackets.

    ``re.escape`` protects characters such as ``.`` or ``+`` that would
    otherwise have a special meaning, and ``\\b`` marks a word boundary so
    that searching for "cat" does not also match "concatenate".
    """
    pattern = re.compile(r"\b" + re.escape(word) + r"\b", re.IGNORECASE)
    return pattern.sub(lambda m: "[" + m.group(0) + "]", text)


if __name__ == "__main__":
    sample = "Released 2023-04-01, patched 2023-05-17. The Cat sat on the cat mat."
    print(find_all_dates(sample))
    print(highlight(sample, "cat"))
