"""A hit's explanation (`query --explain`, `search.explanation`) as lines of text under it."""

from __future__ import annotations

from typing import Any

from search.text import terminal_text


def explanation_lines(explained: dict[str, Any]) -> list[str]:
    """The sections of an explanation: ranks, fusion, terms, words, notes."""
    lines = ["ranks: " + _sides(explained["sides"])]
    fusion = explained.get("fusion")
    if fusion is not None:
        lines.append(
            f"fusion: dense {fusion['dense_weight']:.2f} x z + lexical "
            f"{fusion['lexical_weight']:.2f} x z = {fusion['dense_part']:.3f} + "
            f"{fusion['lexical_part']:.3f} = {fusion['fused']:.3f} for the passage "
            f"({fusion['rule']})"
        )
        lines.append(f"  why: {fusion['why']}")
    if explained["terms"]:
        lines.append(
            f"terms (of {explained['index_passages']:,} passages): "
            + ", ".join(_term(term) for term in explained["terms"])
        )
    for space, words in explained.get("words", {}).items():
        lines.append(f"words, {space}: " + _words(words))
    lines += [f"note: {note}" for note in explained["notes"]]
    return [terminal_text(line) for line in lines]


def _sides(sides: dict[str, dict[str, Any]]) -> str:
    shown = []
    for space, side in sides.items():
        rank = f"#{side['rank']}" if side["rank"] is not None else "not listed"
        score = "no score" if side["score"] is None else f"{side['score']:.4f}"
        kind = "bm25" if space == "lexical" else "cosine"
        shown.append(f"{space} {rank} of {side['listed']} ({kind} {score})")
    return "; ".join(shown)


def _term(term: dict[str, Any]) -> str:
    held = "held" if term["in_passage"] else "absent"
    return f"{term['term']} {held} (in {term['passages']:,}, idf {term['idf']:.2f})"


def _words(words: dict[str, Any]) -> str:
    if "note" in words:
        return words["note"]
    listed = ", ".join(f"{word['word']} {word['share']:+.3f}" for word in words["words"])
    return (
        f"cosine {words['cosine']:.3f} = {listed}; other words {words['other_words']:+.3f}, "
        f"function words {words['function_words']:+.3f}, special tokens "
        f"{words['special_tokens']:+.3f}"
    )
