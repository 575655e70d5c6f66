"""Render a static-vs-contextual comparison as two columns for a terminal."""

from __future__ import annotations

import shutil
from typing import Any

import click

from search.comparison import change_marker
from search.modes import Mode
from search.paths import display_path
from search.text import terminal_text


def side_by_side(
    comparison: dict[str, Any], left: str = Mode.STATIC, right: str = Mode.CONTEXTUAL
) -> str:
    """Two ranked columns, the baseline on the left, the compared mode on the right."""
    width = max(80, shutil.get_terminal_size((120, 24)).columns)
    column = (width - 3) // 2
    name_width = column - 18
    lines = [
        f"query: {terminal_text(comparison['query'])}",
        _cell("#", left, "score", "", name_width)
        + " │ "
        + _cell("#", right, "score", "change", name_width),
    ]
    baseline, compared = comparison[left], comparison[right]
    for row in range(max(len(baseline), len(compared))):
        lines.append(f"{_entry(baseline, row, name_width)} │ {_entry(compared, row, name_width)}")
    return "\n".join(lines)


def _entry(entries: list[dict[str, Any]], row: int, name_width: int) -> str:
    if row >= len(entries):
        return " " * len(_cell("", "", "", "", name_width))
    entry = entries[row]
    marker = change_marker(entry)
    text = _cell(
        entry["rank"], display_path(entry["path"]), f"{entry['score']:.3f}", marker, name_width
    )
    if entry["change"] in ("up", "new"):
        return click.style(text, fg="green")
    if entry["change"] in ("down", "vanished"):
        return click.style(text, fg="red")
    return text


def _cell(rank: Any, name: str, score: str, marker: str, name_width: int) -> str:
    if len(name) > name_width:
        name = "…" + name[-(name_width - 1) :]
    return f"{rank!s:>3} {name:<{name_width}} {score:>6} {marker:<5}"
