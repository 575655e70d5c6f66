"""Arguments that fail a tool's schema, said in one line.

The SDK answers them with pydantic's report (`1 validation error for searchArguments`,
then the field, the reason and a link on lines of their own). This middleware turns
that tool error into one line naming each field and its reason:
`bad arguments for search: k: Input should be greater than or equal to 1`.

The SDK also drops arguments a tool does not take, silently: a filter sent under a
wrong name (`file_type` for `type`) would search without it, a scope widened. Those
are refused too, naming the arguments the tool takes.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
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


# The names of the arguments each tool takes, read from the server's own tool list.
ToolArguments = Callable[[], Awaitable[dict[str, frozenset[str]]]]


def refusing_unknown_arguments(tool_arguments: ToolArguments) -> Any:
    """Server middleware: a `tools/call` with an argument its tool does not take is a
    tool error naming them, never a call made without them."""

    async def refuse_unknown(ctx: Any, call_next: Any) -> Any:
        params = getattr(ctx, "params", None)
        if getattr(ctx, "method", None) != "tools/call" or not isinstance(params, dict):
            return await call_next(ctx)
        name, arguments = params.get("name"), params.get("arguments")
        taken = (await tool_arguments()).get(name) if isinstance(name, str) else None
        if taken is None or not isinstance(arguments, dict):
            return await call_next(ctx)  # an unknown tool: the SDK says so
        unknown = sorted(set(arguments) - taken)
        if not unknown:
            return await call_next(ctx)
        said = (
            f"bad arguments for {name}: unknown argument(s) {', '.join(unknown)} "
            f"(it takes {', '.join(sorted(taken))})"
        )
        return CallToolResult(content=[TextContent(type="text", text=said)], is_error=True)

    return refuse_unknown
