"""How a writer (`Indexer`) indexes, each setting described once: the model settings of a
new index, how its vector spaces keep their vectors, batching, where chunks are encoded
and in what precision.

`WriteSettings` is one checked value. Each of its fields is one setting: its default,
and its `Setting` (the `index` option that sets it, that option's help, and how a value
is checked). `Indexer(target, settings=WriteSettings(...))` takes it whole, and the
`index` command makes its options from it (`search.cli.write_options`), so a new setting
is one field here.

Cheap to import (`ctxsearch --help` reads it): no torch, no store.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from indexer import config
from indexer.config import Variable
from indexer.encoders.choices import DEFAULT_STATIC, STATIC_CHOICES, static_settings
from indexer.encoders.precision import DEFAULT_PRECISION, PRECISIONS, resolve_precision
from indexer.errors import InvalidSettings
from indexer.store.base import Target
from indexer.store.index_types import (
    DEFAULT_INDEX_TYPE,
    DEFAULT_QUANTIZATION,
    HNSW_FROM_VECTORS,
    INDEX_TYPES,
    QUANTIZATIONS,
    QUANTIZE_FROM_VECTORS,
    check_quantization,
)
from indexer.store.manifest import Manifest
from indexer.version import __version__

if TYPE_CHECKING:
    from indexer.encoders.for_index import IndexEncoders
    from indexer.runs.encoding import EncodingBackend

DEFAULT_POOLING = "mean"
DEFAULT_OVERLAP = 32
BATCH_CHUNKS = 256  # chunks encoded and written together
# Contextual vectors published together by the fill: few enough that searches see the
# fill move often (about every 15 s on 2 quiet cores), enough that a publish costs little
# and that passages sorted by length within a batch pad little (5% of the tokens computed
# over 256 SciFact passages, 1.5% over 1,024: the fill 5% faster).
FILL_BATCH_CHUNKS = 1024
_LAST_K = re.compile(r"^mean-last([1-9]\d*)$")


@dataclass(frozen=True)
class Setting:
    """How one field of `WriteSettings` is offered and checked.

    `option` is the `index` option that sets it (None: Python only), `help` what its
    help says, `variable` the environment variable the option falls back to. A value
    not in `choices`, or not a whole number of at least `least`, is refused with the
    setting's `noun`; `check`, where given, does instead: it refuses a value by a rule
    of its own and gives the value kept. None, for a setting whose default is None, is
    not checked: it means the index's own (or, for a new index, the default).
    """

    help: str
    noun: str
    option: str | None = None
    choices: tuple[str, ...] = ()
    least: int | None = None
    check: Callable[[Any], Any] | None = None
    metavar: str | None = None
    variable: Variable | None = None

    def checked(self, value: Any) -> Any:
        """`value`, as kept, or `InvalidSettings` naming the setting."""
        if self.check is not None:
            return self.check(value)
        if self.choices and value not in self.choices:
            raise InvalidSettings(
                f"unknown {self.noun} {value!r}: choose {', '.join(self.choices)}"
            )
        least = self.least
        if least is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < least
        ):
            raise InvalidSettings(
                f"{self.noun} must be a whole number of at least {least}, not {value!r}"
            )
        return value


def _pooling(name: str) -> str:
    """Refuse a pooling that is not mean, cls, max or mean-lastK (K a positive number)."""
    if name not in ("mean", "cls", "max") and not _LAST_K.match(name):
        raise InvalidSettings(
            f"unknown pooling {name!r}: use mean, cls, max or mean-lastK (e.g. mean-last4)"
        )
    return name


def _ray_address(address: str) -> str | None:
    """A Ray address as given (an empty one: encode here)."""
    return address or None


def _about(**description: Any) -> dict[str, Setting]:
    """The metadata of a `WriteSettings` field that makes it a setting."""
    return {"setting": Setting(**description)}


@dataclass(frozen=True)
class WriteSettings:
    """How a writer indexes, checked when made (`InvalidSettings`; `MissingDependency`
    for Ray without its extra): the fields' `Setting`s say what each one does.

    `model`, `pooling` and `static` are those of a new index (None: the defaults); for
    an existing index, None takes its own and another value raises `ModelMismatch`.
    `index_type` and `quantize` (None: an existing index keeps its own) are how the
    vector spaces keep their vectors (`indexer.store.index_types`). `ray` encodes on a
    Ray cluster instead of in this process. `precision` is kept resolved: `auto` becomes
    fp32 or bf16 (`indexer.encoders.precision`).
    """

    model: str | None = field(
        default=None,
        metadata=_about(
            option="--model",
            noun="model",
            help="Model folder or hub name (new index: all-MiniLM-L6-v2).",
        ),
    )
    pooling: str | None = field(
        default=None,
        metadata=_about(
            option="--pooling",
            noun="pooling",
            check=_pooling,
            help="mean (default), cls, max, or mean-lastK (e.g. mean-last4).",
        ),
    )
    index_type: str | None = field(
        default=None,
        metadata=_about(
            option="--index-type",
            noun="index type",
            choices=INDEX_TYPES,
            help="FAISS structure: flat (exact), hnsw (approximate graph), or auto: flat "
            f"below {HNSW_FROM_VECTORS:,} chunks, hnsw from there (new index: auto; an "
            "existing index keeps its type unless given).",
        ),
    )
    quantize: str | None = field(
        default=None,
        metadata=_about(
            option="--quantize",
            noun="quantization",
            choices=QUANTIZATIONS,
            help="How a folder index keeps vectors in memory: none (float32), int8 (1 byte "
            "a dimension), binary (1 bit), each re-scoring its best candidates from float32 "
            "vectors memory-mapped from disk. A PostgreSQL index's HNSW graph: none "
            "(float32), halfvec (2 bytes a dimension) or binary, re-ranked by the float32 "
            f"column. auto: int8 (PostgreSQL: halfvec) from {QUANTIZE_FROM_VECTORS:,} "
            "chunks (new index: none; changing it rebuilds the spaces).",
        ),
    )
    static: str | None = field(
        default=None,
        metadata=_about(
            option="--static",
            noun="static space",
            choices=STATIC_CHOICES,
            help="What the static space holds, chosen when an index is created: the model's "
            "token table (default), a Model2Vec model distilled from it, or GloVe 6B 50d "
            "(the last two need ctxsearch[classic]).",
        ),
    )
    batch_chunks: int = field(
        default=BATCH_CHUNKS,
        metadata=_about(
            option="--batch-chunks",
            noun="batch size",
            least=1,
            help="Chunks encoded (and written) per batch; on Ray, one batch is one actor call.",
        ),
    )
    fill_batch_chunks: int = field(
        default=FILL_BATCH_CHUNKS,
        metadata=_about(
            option="--fill-batch-chunks",
            noun="fill batch size",
            least=0,
            help="A run makes its passages searchable by the lexical and static spaces "
            "first, then encodes their contextual vectors this many at a time, each batch "
            "published as it is done (an interrupted fill resumes at the next run). 0: "
            "encode them within the run, published with it.",
        ),
    )
    ray: str | None = field(
        default=None,
        metadata=_about(
            option="--ray",
            noun="Ray address",
            check=_ray_address,
            metavar="ADDRESS",
            variable=config.RAY,
            help="Encode on a Ray cluster: auto (the running cluster, else a local one) or "
            "its head's address, e.g. 10.0.0.5:6379. Needs pip install 'ctxsearch[ray]'.",
        ),
    )
    ray_workers: int | None = field(
        default=None,
        metadata=_about(
            option="--ray-workers",
            noun="Ray workers",
            least=1,
            help="Encoding actors on the cluster (default: its CPUs / --ray-threads).",
        ),
    )
    ray_threads: int = field(
        default=1,
        metadata=_about(
            option="--ray-threads",
            noun="threads per Ray worker",
            least=1,
            help="CPUs reserved and torch threads used by each encoding actor.",
        ),
    )
    precision: str = field(
        default=DEFAULT_PRECISION,
        metadata=_about(
            option="--precision",
            noun="precision",
            choices=PRECISIONS,
            check=resolve_precision,
            variable=config.PRECISION,
            help="What the contextual encoder computes in: bf16 runs about 1.7x as fast as "
            "fp32 at the same retrieval quality, on a CPU with native bf16 (AVX-512 BF16, "
            "AMX); auto picks bf16 only there. Recorded in the manifest.",
        ),
    )
    chunk_overlap: int = field(
        default=DEFAULT_OVERLAP,
        metadata=_about(
            noun="chunk overlap",
            least=0,
            help="Tokens a chunk shares with the one before it in a window split (below "
            "half of what the model's window holds).",
        ),
    )

    def __post_init__(self) -> None:
        for name, default, setting in setting_fields():
            value = getattr(self, name)
            if value is None and default is None:
                continue
            object.__setattr__(self, name, setting.checked(value))
        if self.ray is not None:
            from indexer.runs.ray import RayEncoding

            RayEncoding(self.ray, self.ray_workers, self.ray_threads)  # Ray installed

    def check_target(self, target: Target) -> None:
        """Refuse (`InvalidSettings`) a quantization the backend of `target` lacks."""
        if self.quantize is None:
            return
        from indexer.store.backends import is_database_url

        database = is_database_url(target)
        try:
            check_quantization(
                self.quantize,
                "pgvector" if database else "faiss",
                "a PostgreSQL index" if database else "a folder index",
            )
        except ValueError as error:
            raise InvalidSettings(str(error)) from None

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

    @property
    def defers_contextual(self) -> bool:
        """Whether a run leaves its new passages' contextual vectors to the fill (not on
        Ray, whose actors encode every space of a batch)."""
        return self.ray is None and self.fill_batch_chunks > 0

    def encoding_backend(
        self,
        encoders_for: Callable[[Manifest], IndexEncoders],
        progress: Callable[[int], None] | None = None,
        spaces: Sequence[str] | None = None,
    ) -> EncodingBackend:
        """Where this writer's chunks are encoded: here with `encoders_for` (`spaces`:
        those to encode, default all), or on Ray (every space)."""
        if self.ray is None:
            from indexer.runs.encoding import LocalEncoding

            return LocalEncoding(encoders_for, progress, spaces)
        from indexer.runs.ray import RayEncoding

        return RayEncoding(self.ray, self.ray_workers, self.ray_threads)


def setting_fields() -> Iterator[tuple[str, Any, Setting]]:
    """Each writer setting, in order: its name, its default and its `Setting`."""
    for item in fields(WriteSettings):
        yield item.name, item.default, item.metadata["setting"]
