"""The request's parameters (`search.request`) as pydantic fields, for the edges that
take JSON: HTTP (`search.server.request_model`) and MCP (`search.mcp_server.search_arguments`).

The help, bounds and defaults are the request's; each edge says which type a kind of
value takes there (HTTP's query string also takes a single string where a list goes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING
from enum import Enum
from typing import Any, Literal

from pydantic import Field

from search.request import Kind, Parameter


def field_type(parameter: Parameter, types: Mapping[Kind, Any]) -> Any:
    """The parameter's type at an edge whose kinds of value have `types` (a choice is
    always one of its choices)."""
    if parameter.kind is Kind.CHOICE:
        return Literal[parameter.choices]
    return types[parameter.kind]


def field_default(default: Any) -> Any:
    """A parameter's default as JSON gives it: required (`...`) for the query, None for
    an empty filter, a mode's name for a mode."""
    if default is MISSING:
        return ...
    if default == ():
        return None
    if isinstance(default, Enum):
        return default.value
    return default


def field_bounds(parameter: Parameter) -> dict[str, Any]:
    """The parameter's bounds as `Field` takes them: of a text's length, or a number's."""
    if parameter.low is None:
        return {}
    if parameter.kind is Kind.TEXT:
        return {"min_length": parameter.low, "max_length": parameter.high}
    return {"ge": parameter.low, "le": parameter.high}


def request_field(default: Any, parameter: Parameter, types: Mapping[Kind, Any]) -> tuple[Any, Any]:
    """A parameter's type and `Field` (its JSON help, bounds and default) at an edge whose
    kinds of value have `types`."""
    field = Field(
        field_default(default), description=parameter.json_help, **field_bounds(parameter)
    )
    return field_type(parameter, types), field
