"""What a writer (`Indexer`) was made with: the index, the model settings for a new one,
batching, precision and where chunks are encoded. Checked once, when it is made."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from indexer.encoders.choices import DEFAULT_STATIC, static_settings
from indexer.encoders.precision import resolve_precision
from indexer.errors import InvalidSettings
from indexer.settings import BATCH_CHUNKS, check_settings
from indexer.store.backends import is_database_url, normalise_target
from indexer.store.base import Target
from indexer.store.index_types import (
    DEFAULT_INDEX_TYPE,
    DEFAULT_QUANTIZATION,
    check_quantization,
)
from indexer.store.manifest import Manifest
from indexer.version import __version__

if TYPE_CHECKING:
    from indexer.encoders.for_index import IndexEncoders
    from indexer.runs.encoding import EncodingBackend

DEFAULT_POOLING = "mean"
DEFAULT_OVERLAP = 32


@dataclass(frozen=True)
class WriteSettings:
    """An `Indexer`'s settings (see its docstring); `precision` resolved to fp32 or bf16.

    `model`, `pooling` and `static` are None where the index's own are taken (or the
    defaults for a new index).
    """

    target: Target
    model: str | None = None
    pooling: str | None = None
    chunk_overlap: int = DEFAULT_OVERLAP
    batch_chunks: int = BATCH_CHUNKS
    index_type: str | None = None
    static: str | None = None
    ray: str | None = None
    ray_workers: int | None = None
    ray_threads: int = 1
    precision: str = "fp32"
    quantize: str | None = None

    @classmethod
    def checked(
        cls,
        index: Target,
        model: str | None = None,
        pooling: str | None = None,
        chunk_overlap: int = DEFAULT_OVERLAP,
        batch_chunks: int = BATCH_CHUNKS,
        index_type: str | None = None,
        static: str | None = None,
        ray: str | None = None,
        ray_workers: int | None = None,
        ray_threads: int = 1,
        precision: str | None = None,
        quantize: str | None = None,
    ) -> WriteSettings:
        """The settings, refused (`InvalidSettings`, `MissingDependency`) if they cannot
        work, before anything is read or written."""
        check_settings(pooling, chunk_overlap, batch_chunks, index_type, static, quantize)
        if quantize is not None:
            database = is_database_url(index)
            try:
                check_quantization(
                    quantize,
                    "pgvector" if database else "faiss",
                    "a PostgreSQL index" if database else "a folder index",
                )
            except ValueError as error:
                raise InvalidSettings(str(error)) from None
        resolved = resolve_precision(precision)  # `auto`: bf16 where the CPU has it natively
        if ray is not None:
            from indexer.runs.ray import RayEncoding

            RayEncoding(ray, ray_workers, ray_threads)  # Ray installed, sane numbers
        return cls(
            normalise_target(index),
            model,
            pooling,
            chunk_overlap,
            batch_chunks,
            index_type,
            static,
            ray,
            ray_workers,
            ray_threads,
            resolved,
            quantize,
        )

    def new_index_settings(self) -> tuple[str, str, str]:
        """The model (canonical name), pooling and static space of a new index."""
        from indexer.encoders.loading import canonical_model_name

        return (
            canonical_model_name(self.model),
            self.pooling or DEFAULT_POOLING,
            self.static or DEFAULT_STATIC,
        )

    def new_manifest(self, encoders: IndexEncoders) -> Manifest:
        """The manifest of a new index built with `encoders` (`for_new_index`)."""
        loaded = encoders.loaded
        content_tokens = loaded.max_tokens - loaded.tokenizer.num_special_tokens_to_add()
        if self.chunk_overlap >= content_tokens // 2:
            raise InvalidSettings(
                f"chunk overlap {self.chunk_overlap} is too large: this model's chunks hold "
                f"{content_tokens} tokens, so the overlap must be below {content_tokens // 2}"
            )
        static = encoders["static"]
        return Manifest(
            static=encoders.key.static,
            static_settings=static_settings(static),
            space_dims={"static": static.dim} if static.dim != loaded.dim else {},
            model=loaded.name,
            model_fingerprint=loaded.fingerprint,
            pooling=encoders.key.pooling,
            dim=loaded.dim,
            max_tokens=loaded.max_tokens,
            chunk_tokens=content_tokens,
            chunk_overlap=self.chunk_overlap,
            version=__version__,
            index_type=self.index_type or DEFAULT_INDEX_TYPE,
            quantize=self.quantize or DEFAULT_QUANTIZATION,
            precision=self.precision,
        )

    def check_matches(self, manifest: Manifest) -> None:
        """Refuse (`ModelMismatch`) a model, pooling or static space given for an index
        that was built with others."""
        if self.model is not None:
            from indexer.encoders.loading import canonical_model_name

            manifest.check_model(canonical_model_name(self.model))
        if self.pooling is not None:
            manifest.check_pooling(self.pooling)
        if self.static is not None:
            manifest.check_static(self.static)

    def encoding_backend(
        self,
        encoders_for: Callable[[Manifest], IndexEncoders],
        progress: Callable[[int], None] | None = None,
    ) -> EncodingBackend:
        """Where this writer's chunks are encoded: here with `encoders_for`, or on Ray."""
        if self.ray is None:
            from indexer.runs.encoding import LocalEncoding

            return LocalEncoding(encoders_for, progress)
        from indexer.runs.ray import RayEncoding

        return RayEncoding(self.ray, self.ray_workers, self.ray_threads)
