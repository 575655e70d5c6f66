"""Content that is text but not language: base64 blobs, minified code, data dumps.

Such a file decodes fine, yet cut into chunks it is hundreds of windows of noise that
take minutes to encode and then match nothing a person would ask. It is skipped with a
reason the run reports, so the user can exclude it or keep it out of the folder.
"""

from __future__ import annotations

# Below this size, a file is cheap whatever it holds.
MIN_CHARACTERS = 20_000
# A "word" this long (no whitespace) is not language.
LONG_WORD = 100
# Files with more than this share of their characters in such words are skipped.
MAX_SHARE_IN_LONG_WORDS = 0.5


def why_not_prose(text: str) -> str | None:
    """Why `text` is not worth indexing as language, or None when it is."""
    if len(text) < MIN_CHARACTERS:
        return None
    in_long_words = sum(len(word) for word in text.split() if len(word) > LONG_WORD)
    share = in_long_words / len(text)
    if share <= MAX_SHARE_IN_LONG_WORDS:
        return None
    return (
        f"no natural-language text: {share:.0%} of its {len(text) / 1024:.0f} KB is in runs of "
        f"over {LONG_WORD} characters without a space (base64, minified code or data)"
    )
