"""Arguments that fail a tool's schema, said in one line.

The SDK answers them with pydantic's report (`1 validation error for searchArguments`,
then the field, the reason and a link on lines of their own). This middleware turns
that tool error into one line naming each field and its reason:
`bad arguments for search: k: Input should be greater than or equal to 1`.
"""

from __future__ import annotations

import re
from typing import Any

from mcp.types import CallToolResult, TextContent

_REPORT = re.compile(r"^Error executing tool (\S+): \d+ validation errors? for \S+$")
_REASON = re.compile(r"^  (\S.*?)(?: \[type=[^\]]*\])?$")


def one_line(text: str) -> str | None:
    """The one-line form of a validation report, or None if `text` is not one."""
    lines = text.splitlines()
    found = _REPORT.match(lines[0]) if lines else None
    if found is None:
        return None
    problems, field = [], None
    for line in lines[1:]:
        if line.startswith("    "):  # "For further information visit ..."
            continue
        reason = _REASON.match(line)
        if reason is not None and field is not None:
            problems.append(f"{field or 'arguments'}: {reason.group(1)}")
            field = None
        else:
            field = line.strip()
    return f"bad arguments for {found.group(1)}: " + "; ".join(problems)


async def one_line_argument_errors(ctx: Any, call_next: Any) -> Any:
    """Server middleware: a `tools/call` refused by its schema says why in one line."""
    result = await call_next(ctx)
    if getattr(ctx, "method", None) != "tools/call":
        return result
    # the chain hands the result on as a model, or as its wire form (a dict)
    if isinstance(result, CallToolResult) and result.is_error and result.content:
        first = result.content[0]
        shorter = one_line(first.text) if isinstance(first, TextContent) else None
        if shorter is not None:
            return result.model_copy(update={"content": [TextContent(type="text", text=shorter)]})
    elif isinstance(result, dict) and result.get("isError") and result.get("content"):
        first = result["content"][0]
        shorter = one_line(first.get("text", "")) if isinstance(first, dict) else None
        if shorter is not None:
            return {**result, "content": [{"type": "text", "text": shorter}]}
    return result
