"""The HTTP form of a search request, made from the request's parameters
(`search.request`): one set of fields for the query string of `GET /search` and the
JSON body of `POST /search`, named as HTTP names them (`q`, `type`), with the bounds
and help of the command line's options.

The query string's values are all text, so `SearchParameters` converts (`k=3`); the
body, `SearchBody`, takes the same fields with strict types (`"k": 2.0`, `"k": true`
or `"all_chunks": "yes"` are refused, not converted) and refuses unknown fields, so a
misspelt field is not ignored.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, create_model

from search.limits import MAX_BATCH_QUERIES
from search.request import (
    Kind,
    Parameter,
    SearchRequest,
    WhereJSON,
    parameter_of,
    parameters,
    search_request,
)
from search.request_fields import field_bounds, field_type, request_field

_TYPES: dict[Kind, Any] = {
    Kind.TEXT: str,
    Kind.WHOLE: int,
    Kind.NUMBER: float | None,
    Kind.FLAG: bool,
    Kind.TEXTS: str | list[str] | None,
    Kind.PLACES: str | list[str] | None,
    Kind.PAIRS: WhereJSON | None,
}


class _Parameters(BaseModel):
    def request(self) -> SearchRequest:
        """The search these fields ask for (`InvalidQuery` if one is unusable)."""
        given = {name: getattr(self, about.http) for name, _default, about in parameters()}
        return search_request(**given)


def http_field(default: Any, parameter: Parameter) -> tuple[Any, Any]:
    """A parameter's pydantic type and field (its HTTP help, bounds and default)."""
    return request_field(default, parameter, _TYPES)


SearchParameters = create_model(
    "SearchParameters",
    __base__=_Parameters,
    __doc__="The query string of `GET /search`.",
    **{about.http: http_field(default, about) for _name, default, about in parameters()},
)


class SearchBody(SearchParameters):  # type: ignore[misc, valid-type]
    """The body of `POST /search`: the fields of the query string of `GET /search`."""

    model_config = ConfigDict(strict=True, extra="forbid")


class _BatchFields(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")  # as `SearchBody`

    def options(self) -> dict[str, Any]:
        """The search options applied to every query (the request's keywords)."""
        return {
            name: getattr(self, about.http)
            for name, _default, about in parameters()
            if about.kind is not Kind.TEXT
        }


SearchBatchBody = create_model(
    "SearchBatchBody",
    __base__=_BatchFields,
    __doc__="The body of `POST /search/batch`: `queries` and the fields of `POST /search` "
    "but `q`, applied to each query.",
    queries=(
        list[str],
        Field(
            ...,
            description=f"The query texts (1 to {MAX_BATCH_QUERIES}), each answered as "
            "`POST /search` answers its `q`.",
        ),
    ),
    **{
        about.http: http_field(default, about)
        for _name, default, about in parameters()
        if about.kind is not Kind.TEXT
    },
)


def query_parameter(name: str, description: str | None = None) -> Any:
    """One request parameter as a query parameter of its own, with its type and bounds
    (`/compare` takes the query and `k`)."""
    _default, parameter = parameter_of(name)
    description = description or parameter.json_help
    bounds = field_bounds(parameter)
    return Annotated[field_type(parameter, _TYPES), Query(description=description, **bounds)]
