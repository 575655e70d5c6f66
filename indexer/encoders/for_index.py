"""From an index's manifest to its loaded encoders: the one way every part makes them.

`encoders_for(manifest)` loads the index's model (once per process, see
`indexer.encoders.loading`), checks it against the manifest's fingerprint, makes one
encoder per vector space with the index's pooling and static space, and checks that the
static encoder makes the vectors the manifest says it does. Indexing, repair, the Ray
workers and the Searcher's torch path all take their encoders from it, so a mismatch is
refused the same way everywhere.

`EncoderHolder` keeps a long-lived writer's encoders (`serve --writable`, `watch`, an
app's `Indexer`) with the key of the manifest they were made for (`encoder_key`), and
makes new ones when a run's manifest differs; it may be shared between threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from indexer.encoders.choices import static_settings
from indexer.encoders.encoder_key import EncoderKey, settings_text
from indexer.errors import InvalidSettings
from indexer.store.manifest import Manifest

if TYPE_CHECKING:
    from indexer.encoders.base import Encoder
    from indexer.encoders.loading import LoadedModel

# Told `False` as a model starts loading and `True` once it has (a progress bar's cue).
OnLoad = Callable[[bool], None]


@dataclass(frozen=True)
class IndexEncoders:
    """A loaded model, the encoder of each vector space made from it, and what for."""

    loaded: LoadedModel
    spaces: dict[str, Encoder]
    key: EncoderKey

    def __getitem__(self, space: str) -> Encoder:
        return self.spaces[space]


def encoders_for(
    manifest: Manifest,
    precision: str = "fp32",
    loaded: LoadedModel | None = None,
    on_load: OnLoad | None = None,
) -> IndexEncoders:
    """The encoders that make the vectors of the index of `manifest`, the contextual one
    computing in `precision` (queries: fp32; writes: the writer's).

    `loaded` is used if it is the index's model (same name and fingerprint); else the
    model is loaded. Raises `ModelMismatch` when the model or the static encoder here
    would make other vectors than the stored ones.
    """
    model = loaded_model(manifest.model, manifest.model_fingerprint, loaded, on_load)
    manifest.check_model(model.name, model.fingerprint)
    spaces = _space_encoders(model, manifest.pooling, manifest.static, precision)
    manifest.check_static_settings(static_settings(spaces["static"]))
    return IndexEncoders(model, spaces, EncoderKey.of(manifest, precision))


def encoders_for_new_index(
    model: str,
    pooling: str,
    static: str,
    precision: str = "fp32",
    loaded: LoadedModel | None = None,
    on_load: OnLoad | None = None,
) -> IndexEncoders:
    """The encoders a new index with these settings is built with (its manifest is made
    from them); `model` is a canonical name (`canonical_model_name`)."""
    made = loaded_model(model, None, loaded, on_load)
    spaces = _space_encoders(made, pooling, static, precision)
    key = EncoderKey(
        index_id="",  # the store gives the index its id when it is initialised
        model=made.name,
        fingerprint=made.fingerprint,
        pooling=pooling,
        static=static,
        static_settings=settings_text(static_settings(spaces["static"])),
        precision=precision,
    )
    return IndexEncoders(made, spaces, key)


def loaded_model(
    name: str,
    fingerprint: str | None = None,
    loaded: LoadedModel | None = None,
    on_load: OnLoad | None = None,
) -> LoadedModel:
    """`loaded` if it is the model `name` (with `fingerprint`, when given), else that
    model loaded, with `on_load` told before and after."""
    if loaded is not None and loaded.name == name and fingerprint in (None, loaded.fingerprint):
        return loaded
    from indexer.encoders.loading import load_model  # imports torch

    if on_load is not None:
        on_load(False)
    model = load_model(name)
    if on_load is not None:
        on_load(True)
    return model


def _space_encoders(
    loaded: LoadedModel, pooling: str, static: str, precision: str
) -> dict[str, Encoder]:
    from indexer.encoders.spaces import space_encoders

    try:
        return space_encoders(loaded, pooling, static, precision)
    except ValueError as error:  # e.g. mean-last99 on a six-layer model
        raise InvalidSettings(str(error)) from error


class EncoderHolder:
    """A writer's encoders, kept while they fit the index it writes into.

    `precision` is what the writer's contextual encoder computes in. Threads may share
    a holder: one makes the encoders, the others wait for them.
    """

    def __init__(self, precision: str):
        self.precision = precision
        self._held: IndexEncoders | None = None
        self._lock = threading.RLock()

    @property
    def loaded(self) -> LoadedModel | None:
        """The model the held encoders use, or None while nothing was loaded."""
        held = self._held
        return held.loaded if held is not None else None

    def for_index(self, manifest: Manifest, on_load: OnLoad | None = None) -> IndexEncoders:
        """The encoders of the index of `manifest`: the held ones if they were made for
        it, else new ones (the model loaded again only if it is another)."""
        key = EncoderKey.of(manifest, self.precision)
        with self._lock:
            if self._held is None or self._held.key != key:
                self._held = encoders_for(manifest, self.precision, self.loaded, on_load)
            return self._held

    def for_new_index(
        self, model: str, pooling: str, static: str, on_load: OnLoad | None = None
    ) -> IndexEncoders:
        """The encoders a new index with these settings is built with: the held ones if
        they have them (whatever index they were made for), else new ones."""
        with self._lock:
            held = self._held
            if held is None or not held.key.same_settings(model, pooling, static):
                held = encoders_for_new_index(
                    model, pooling, static, self.precision, self.loaded, on_load
                )
                self._held = held
            return held

    def claim(self, manifest: Manifest) -> None:
        """The held encoders, made for a new index's settings, are now this new index's
        (the manifest made from them, with the id the store gave it)."""
        key = EncoderKey.of(manifest, self.precision)
        with self._lock:
            held = self._held
            if held is not None and held.key == replace(key, index_id=""):
                self._held = IndexEncoders(held.loaded, held.spaces, key)
