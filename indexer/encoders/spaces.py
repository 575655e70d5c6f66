"""One encoder per vector space of an index, made from one loaded model.

The contextual space pools the transformer's last layer(s). The static space holds, by
the index's choice (`index --static`), the model's own token-embedding table (`token`,
the default), a static model distilled from the transformer (`model2vec`), or GloVe's
word vectors (`glove`); the last two need the extra `ctxsearch[classic]`.
"""

from __future__ import annotations

from indexer.config import model_cache_dir
from indexer.encoders.base import Encoder
from indexer.encoders.choices import DEFAULT_STATIC, STATIC_CHOICES
from indexer.encoders.loading import LoadedModel
from indexer.errors import InvalidSettings
from indexer.spaces import Space


def static_encoder(loaded: LoadedModel, static: str = DEFAULT_STATIC) -> Encoder:
    """The encoder of the static space an index chose."""
    if static not in STATIC_CHOICES:
        raise InvalidSettings(
            f"unknown static space {static!r}: choose {', '.join(STATIC_CHOICES)}"
        )
    from indexer.encoders.classic import require_packages
    from indexer.encoders.classic import static_encoder as classic_encoder

    method = "static" if static == "token" else static
    require_packages([method])
    return classic_encoder(method, loaded, model_cache_dir())


def space_encoders(
    loaded: LoadedModel, pooling: str, static: str = DEFAULT_STATIC, precision: str = "fp32"
) -> dict[str, Encoder]:
    """The contextual encoder (with the index's pooling, computing in `precision`, fp32
    or bf16) and the static one, by space name."""
    from indexer.encoders.hashed import hashed_space_encoders, is_hashed

    if is_hashed(loaded):
        return hashed_space_encoders(pooling, static)
    from indexer.encoders.transformer import ContextualEncoder

    return {
        Space.CONTEXTUAL.value: ContextualEncoder(loaded, pooling, precision=precision),
        Space.STATIC.value: static_encoder(loaded, static),
    }
