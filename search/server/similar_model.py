"""The query string of `GET /similar`: the item (a stored path or `record:ID` with an
optional line, or a passage's `chunk_id`) and the search's own `k`, `all_chunks` and
filters, with their names, bounds and help (`search.request`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from search.limits import MAX_DOCUMENT_ID
from search.modes import Mode
from search.request import similar_parameters
from search.server.request_model import http_field
from search.similar import SIMILAR_MODES


class _Similar(BaseModel):
    def options(self) -> dict[str, Any]:
        """The keyword arguments of `Searcher.similar`."""
        options = {name: getattr(self, about.http) for name, _d, about in similar_parameters()}
        return {
            "item": self.item,
            "line": self.line,
            "chunk_id": self.chunk_id,
            "mode": self.mode,
            **options,
        }


SimilarParameters = create_model(
    "SimilarParameters",
    __base__=_Similar,
    __doc__="The query string of `GET /similar`.",
    item=(
        str | None,
        Field(
            None,
            min_length=1,
            description="The document: its stored (absolute) path, or record:ID for a record.",
        ),
    ),
    line=(
        int | None,
        Field(None, ge=1, description="With item: the passage at this 1-based line."),
    ),
    chunk_id=(
        int | None,
        Field(None, ge=1, le=MAX_DOCUMENT_ID, description="A passage by a hit's chunk_id."),
    ),
    mode=(
        Literal[SIMILAR_MODES],  # type: ignore[valid-type]
        Field(Mode.CONTEXTUAL.value, description="The vector space searched."),
    ),
    **{about.http: http_field(default, about) for _name, default, about in similar_parameters()},
)
