"""The search parameters of the MCP tools `search` and `similar`, made from the request's
(`search.request`): their names (a parameter's `mcp` name where it has one, so clients
keep `path_glob` and `type`), bounds, defaults and help are those the command line and
HTTP read; a new search parameter reaches the tools with nothing written here.

The SDK builds a tool's input schema from its function's signature, so a tool that takes
these parameters is given a signature with them (`with_request_parameters`), and turns
the arguments it is called with back into the request's keywords (`request_keywords`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Annotated, Any, TypeVar

from pydantic import Field

from search.request import Kind, Parameter, WhereJSON
from search.request_fields import field_bounds, field_default, field_type

F = TypeVar("F", bound=Callable[..., Any])

# What each kind of value is in a tool's arguments (JSON: a list where the command line
# repeats an option).
_TYPES: dict[Kind, Any] = {
    Kind.TEXT: str,
    Kind.WHOLE: int,
    Kind.NUMBER: float | None,
    Kind.FLAG: bool,
    Kind.TEXTS: list[str] | None,
    Kind.PLACES: list[str] | None,
    Kind.PAIRS: WhereJSON | None,
}

Described = Iterable[tuple[str, Any, Parameter]]


def mcp_name(name: str, parameter: Parameter) -> str:
    """The argument name of the request parameter `name` in the MCP tools."""
    return parameter.mcp or name


def tool_parameters(described: Described) -> list[inspect.Parameter]:
    """The request parameters `described` as a tool function's keyword parameters, each
    annotated with its type, bounds and help."""
    made = []
    for name, default, parameter in described:
        field = Field(description=parameter.json_help, **field_bounds(parameter))
        annotation = Annotated[field_type(parameter, _TYPES), field]
        given = field_default(default)
        made.append(
            inspect.Parameter(
                mcp_name(name, parameter),
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty if given is ... else given,
                annotation=annotation,
            )
        )
    return made


def with_request_parameters(described: Described) -> Callable[[F], F]:
    """A tool function whose `**options` are the request parameters `described`, given
    the signature the SDK reads: its own parameters, then those, and a dict for its
    answer."""
    described = tuple(described)

    def decorate(tool: F) -> F:
        own = [
            parameter
            for parameter in inspect.signature(tool, eval_str=True).parameters.values()
            if parameter.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [*own, *tool_parameters(described)], return_annotation=dict[str, Any]
        )
        return tool

    return decorate


def request_keywords(arguments: dict[str, Any], described: Described) -> dict[str, Any]:
    """The request's keywords (`under`, `path`, `file_type` ...) for the arguments of a
    tool called with the parameters `described`."""
    return {
        name: arguments[mcp_name(name, parameter)]
        for name, _default, parameter in described
        if mcp_name(name, parameter) in arguments
    }
