"""The manifest: what an index was built with, checked every time it is opened."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields

from indexer.errors import IndexCorrupt, ModelMismatch
from indexer.spaces import VECTOR_SPACES

# The newest on-disk layout this code reads, bumped when old code could not read one.
# 1: what every store shares; 2: a folder index whose spaces have delta segments;
# 3: one with a quantized space (codes and a float32 vectors file: `quantized.py`).
INDEX_FORMAT = 3
SEGMENTED_FORMAT = 2
QUANTIZED_FORMAT = 3
SPACES = tuple(space.value for space in VECTOR_SPACES)


@dataclass
class Manifest:
    """The settings every vector in the index depends on."""

    model: str
    model_fingerprint: str
    pooling: str
    dim: int
    max_tokens: int
    chunk_tokens: int
    chunk_overlap: int
    version: str
    spaces: list[str] = field(default_factory=lambda: list(SPACES))
    lexical: dict[str, str] = field(default_factory=dict)  # set by the store that keeps it
    metric: str = "cosine (inner product of L2-normalised vectors)"
    index_type: str = "auto"
    # How vector spaces are quantized (`indexer.store.index_types.QUANTIZATIONS`): none,
    # int8, binary, or auto (int8 from a size on).
    quantize: str = "none"
    format: int = 1  # raised by the store that writes a newer layout
    generation: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0
    # A new identity for every new index, so that readers notice an index rebuilt in place.
    index_id: str = ""
    # What the static space holds: the model's token table (`token`), or another static
    # method (`model2vec`, `glove`) with its own dimension in `space_dims`.
    static: str = "token"
    static_settings: dict = field(default_factory=dict)
    space_dims: dict[str, int] = field(default_factory=dict)
    # What the contextual encoder computed in when chunks were last encoded: fp32, or
    # bf16 where the CPU has it natively (`indexer.encoders.precision`).
    precision: str = "fp32"
    # Where a folder index keeps each vector space: the generation of its base file and
    # of each delta segment since (`indexer.store.local.segments`); empty elsewhere.
    segments: dict[str, dict] = field(default_factory=dict)
    # The chunks whose contextual vector a run has not stored yet, as ranges of ids
    # (`indexer.store.unfilled`): empty once the fill is done.
    unfilled: list[list[int]] = field(default_factory=list)

    def dim_of(self, space: str) -> int:
        """The dimension of one vector space's vectors."""
        return int(self.space_dims.get(space, self.dim))

    def to_rows(self) -> dict[str, str]:
        """The manifest as key -> JSON text, one row per setting."""
        return {key: json.dumps(value) for key, value in asdict(self).items()}

    @classmethod
    def from_rows(cls, rows: dict[str, str]) -> Manifest:
        """Rebuild a manifest from its rows; raise `IndexCorrupt` if a setting is missing."""
        names = {item.name for item in fields(cls)}
        try:
            values = {key: json.loads(value) for key, value in rows.items() if key in names}
            manifest = cls(**values)
        except (TypeError, ValueError) as error:
            raise IndexCorrupt(f"the index manifest is incomplete or invalid ({error})") from error
        if manifest.format > INDEX_FORMAT:
            raise IndexCorrupt(
                f"the index has format {manifest.format}; this ctxsearch reads up to "
                f"{INDEX_FORMAT}: upgrade ctxsearch"
            )
        return manifest

    def check_model(self, model: str, fingerprint: str | None = None) -> None:
        """Refuse a model other than the one the vectors were made with."""
        if model != self.model:
            raise ModelMismatch(
                f"the index was built with model {self.model!r}, not {model!r}: "
                "query it with its own model, or build a new index"
            )
        if fingerprint is not None and fingerprint != self.model_fingerprint:
            raise ModelMismatch(
                f"the weights of {model!r} differ from those the index was built with "
                f"(fingerprint {fingerprint} vs {self.model_fingerprint}): rebuild the index"
            )

    def check_static(self, static: str) -> None:
        """Refuse a static space other than the one the index keeps."""
        if static != self.static:
            raise ModelMismatch(
                f"the index keeps a {self.static} static space, not {static}: "
                "use its own, or build a new index"
            )

    def check_static_settings(self, settings: dict) -> None:
        """Refuse a static encoder whose vectors would differ from the stored ones."""
        if self.static_settings and settings != self.static_settings:
            raise ModelMismatch(
                f"the {self.static} static space was made with {self.static_settings}, "
                f"this ctxsearch makes it with {settings}: rebuild the index"
            )

    def check_pooling(self, pooling: str) -> None:
        """Refuse a pooling other than the one the contextual vectors were made with."""
        if pooling != self.pooling:
            raise ModelMismatch(
                f"the index was built with {self.pooling} pooling, not {pooling}: "
                "use its pooling, or build a new index"
            )
