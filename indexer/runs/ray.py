"""Encode an indexing run's chunks on a Ray cluster, with Ray Data.

The driver (the `ctxsearch index` process) keeps reading, chunking and writing; only chunk
texts travel. How a run flows:

    driver --put(seq, texts)--> feeder actor --one read task--> one-row blocks of texts
        --map_batches(actor pool: one model per actor)--> one-row blocks of vectors
        --iter_batches, in order--> driver --> the run's one store change

- The feeder is a small actor on the driver's node that holds the texts of the batches in
  flight (at most `window` of them), so that memory does not grow with the corpus: the
  driver hands it a batch, and drops it once that batch's vectors are written.
- One read task, also on the driver's node, asks the feeder for batch 0, 1, 2 ... and
  yields each as a block of one row, so the dataset's order is the driver's order, and a
  retried read task yields the same blocks again (a batch already written comes back
  empty).
- The encoding actors each load the model once, with `torch.set_num_threads(threads)`
  and `threads` CPUs reserved, and compute every space of the index with the same code
  and the same batches as a local run. Ray Data restarts an actor whose process dies and
  retries its batches.
- `preserve_order` makes the vectors come back in the order the batches went out; the
  driver checks each row's batch number against what it expects.
"""

from __future__ import annotations

import asyncio
import logging
import re
import warnings
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from indexer import errors
from indexer.errors import CtxsearchError, EncodingFailed, InvalidSettings, MissingDependency
from indexer.runs.encoding import Item, Vectors
from indexer.store.manifest import Manifest
from indexer.version import __version__

RAY_EXTRA = "ctxsearch[ray]"
AUTO = "auto"
DEFAULT_THREADS = 1
ACTORS_START_TIMEOUT = 600  # seconds: an autoscaling cluster may need to add nodes


def require_ray() -> Any:
    """Import ray (and Ray Data), or raise MissingDependency naming the extra."""
    try:
        import ray
        import ray.data
    except ImportError as error:
        raise MissingDependency(
            f"--ray needs Ray (ray[data]), which is not installed: pip install '{RAY_EXTRA}'"
        ) from error
    return ray


@dataclass
class _InFlight:
    """A batch sent to the cluster (`seq`), or an empty one that needs no cluster."""

    item: Any
    seq: int | None
    vectors: Vectors | None = None


class RayEncoding:
    """Encodes batches on a Ray cluster: `address` is `auto` or a Ray address.

    A pool of `workers` actors (default: as many as the cluster's CPUs allow at
    `threads` CPUs each) encodes; `window` batches at most are in flight (default: four
    per actor). After a run, `workers` is how many actor processes encoded its batches
    (a restarted actor is a new process).
    """

    def __init__(
        self,
        address: str = AUTO,
        workers: int | None = None,
        threads: int = DEFAULT_THREADS,
        window: int | None = None,
    ):
        if workers is not None and workers < 1:
            raise InvalidSettings(f"Ray workers must be at least 1, not {workers}")
        if threads < 1:
            raise InvalidSettings(f"threads per Ray worker must be at least 1, not {threads}")
        require_ray()
        self.address = address
        self.requested_workers = workers
        self.threads = threads
        self.window = window
        self.workers = 0
        self._seen: set[str] = set()
        self._connected_here = False

    # -- the cluster -----------------------------------------------------------------------

    def _connect(self) -> Any:
        ray = require_ray()
        if not ray.is_initialized():
            ray.init(
                address=None if self.address == AUTO else self.address,
                logging_level=logging.WARNING,
                include_dashboard=False,
                # Workers' output (and Ray's notes on a worker it restarts) would land on
                # this process's stdout, where --json prints; it stays in the cluster's logs.
                log_to_driver=False,
            )
            self._connected_here = True
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)
        # A failed run is one line from ctxsearch; the stack trace stays in Ray's logs.
        logging.getLogger("ray.data.exceptions").setLevel(logging.CRITICAL)
        # A run of fewer batches than actors is fine; Ray Data would warn about it.
        warnings.filterwarnings(
            "ignore", message="The minimum number of concurrent actors", category=UserWarning
        )
        return ray

    def close(self) -> None:
        if self._connected_here:
            import ray

            ray.shutdown()
            self._connected_here = False

    def _worker_count(self, ray: Any) -> int:
        if self.requested_workers is not None:
            return self.requested_workers
        cpus = ray.cluster_resources().get("CPU", 1)
        return max(1, int(cpus // self.threads))

    # -- encoding --------------------------------------------------------------------------

    def encode(
        self, manifest: Manifest, batches: Iterable[tuple[Item, list[str]]]
    ) -> Iterator[tuple[Item, Vectors]]:
        source = iter(batches)
        first = next(source, None)
        if first is None:
            return
        ray = self._connect()
        workers = self._worker_count(ray)
        window = self.window or 4 * workers
        node = ray.get_runtime_context().get_node_id()
        here = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(node, soft=False)
        feeder = ray.remote(_Feeder).options(num_cpus=0, scheduling_strategy=here).remote()
        results = None
        try:
            dataset = _dataset(ray, feeder, here, manifest, workers, self.threads)
            results = iter(dataset.iter_batches(batch_size=None, batch_format="pyarrow"))
            yield from self._stream(feeder, results, first, source, manifest, window)
        except CtxsearchError:
            raise
        except Exception as error:  # Ray's own errors, around ours when a worker raised one
            cause = _ctxsearch_cause(error)
            if cause is not None:
                raise cause from error
            raise EncodingFailed(
                f"the Ray cluster could not encode the chunks ({_first_line(error)}); "
                "the index was not changed"
            ) from error
        finally:
            if results is not None and hasattr(results, "close"):
                results.close()
            ray.kill(feeder)

    def _stream(
        self,
        feeder: Any,
        results: Iterator[Any],
        first: tuple[Item, list[str]],
        source: Iterator[tuple[Item, list[str]]],
        manifest: Manifest,
        window: int,
    ) -> Iterator[tuple[Item, Vectors]]:
        queue: deque[_InFlight] = deque()
        sent = 0
        upcoming: tuple[Item, list[str]] | None = first
        while True:
            # Keep up to `window` batches in flight; reading the next files happens here,
            # on the driver, while the cluster encodes the ones already sent.
            while upcoming is not None and len(queue) < window:
                item, texts = upcoming
                if texts:
                    feeder.put.remote(sent, list(texts))
                    queue.append(_InFlight(item, sent))
                    sent += 1
                else:
                    queue.append(_InFlight(item, None, _empty(manifest)))
                upcoming = next(source, None)
                if upcoming is None:
                    feeder.finish.remote(sent)
            if not queue:
                return
            if queue[0].vectors is None:
                block = next(results, None)
                if block is None:
                    raise RuntimeError(f"the Ray dataset ended before batch {queue[0].seq}")
                self._seen.update(_take(block, queue, manifest))
                self.workers = len(self._seen)
            while queue and queue[0].vectors is not None:
                done = queue.popleft()
                yield done.item, done.vectors
                if done.seq is not None:
                    feeder.release.remote(done.seq)


def _take(block: Any, queue: deque[_InFlight], manifest: Manifest) -> list[str]:
    """Give each row of a result block (one batch's vectors) to its batch, in order.

    Returns the workers that encoded them.
    """
    workers = []
    due = (entry for entry in queue if entry.seq is not None and entry.vectors is None)
    for row in block.to_pylist():
        target = next(due, None)
        if target is None or row["seq"] != target.seq:
            expected = target.seq if target else "none"
            raise RuntimeError(f"the Ray dataset returned batch {row['seq']}, not {expected}")
        target.vectors = {
            name: np.frombuffer(row[name], dtype=np.float32).reshape(-1, manifest.dim).copy()
            for name in manifest.spaces
        }
        workers.append(row["worker"])
    return workers


def _empty(manifest: Manifest) -> Vectors:
    return {name: np.zeros((0, manifest.dim), dtype=np.float32) for name in manifest.spaces}


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__


_RAISED_IN_WORKER = re.compile(r"^indexer\.errors\.(\w+): (.+)$", re.MULTILINE)


def _ctxsearch_cause(error: BaseException) -> CtxsearchError | None:
    """The ctxsearch error (a model mismatch on a worker, say) inside Ray's wrappers.

    A task's error comes back as its cause; an actor that failed to start comes back
    as the text of its traceback, whose last ctxsearch error is rebuilt from its name.
    """
    seen = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, CtxsearchError):
            return current
        raised = _RAISED_IN_WORKER.findall(str(current))
        kind = getattr(errors, raised[-1][0], None) if raised else None
        if isinstance(kind, type) and issubclass(kind, CtxsearchError):
            return kind(raised[-1][1].strip())
        cause = getattr(current, "cause", None)
        if isinstance(cause, BaseException):
            current = cause
        else:
            current = current.__cause__ or current.__context__
    return None


# -- the Ray side: these run in the cluster's processes ---------------------------------------


def _dataset(
    ray: Any, feeder: Any, here: Any, manifest: Manifest, workers: int, threads: int
) -> Any:
    """feeder -> one read task -> map_batches on `workers` actors; one row per batch."""
    from ray.data import DataContext

    context = DataContext.get_current()
    saved = (
        context.execution_options.preserve_order,
        context.enable_progress_bars,
        context.target_max_block_size,
        context.wait_for_min_actors_s,
    )
    # Each batch travels as one row, and a block of at most one row leaves the read task
    # as soon as it is yielded (a larger target would hold rows back to fill a block).
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    context.target_max_block_size = 1
    # Start once every actor has loaded its model (so a worker that cannot load it
    # fails the run at once, and the first batches spread over the whole pool).
    context.wait_for_min_actors_s = ACTORS_START_TIMEOUT
    try:
        dataset = ray.data.read_datasource(
            _feeder_source(feeder),
            override_num_blocks=1,
            num_cpus=0,
            scheduling_strategy=here,
        )
        return _encode_with_actors(dataset, manifest, workers, threads)
    finally:
        (
            context.execution_options.preserve_order,
            context.enable_progress_bars,
            context.target_max_block_size,
            context.wait_for_min_actors_s,
        ) = saved


def _encode_with_actors(dataset: Any, manifest: Manifest, workers: int, threads: int) -> Any:
    from ray.data import ActorPoolStrategy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # ray_remote_args_fn, below
        return dataset.map_batches(
            _EncodeWorker,
            fn_constructor_kwargs={
                # as text: a worker of another version is told so, not failing to unpickle
                "manifest_rows": manifest.to_rows(),
                "threads": threads,
                "version": __version__,
            },
            batch_size=None,
            batch_format="pyarrow",
            zero_copy_batch=True,
            # One batch at a time per actor: a free actor anywhere gets the next batch
            # (more would queue batches behind the actor nearest the data), and a worker
            # that dies takes only its own batch with it, for Ray to retry.
            compute=ActorPoolStrategy(size=workers, max_tasks_in_flight_per_actor=1),
            num_cpus=threads,
            # Never fused into the read: the read is one task on the driver's node, and
            # fused, one actor would run it and encode every batch alone.
            ray_remote_args_fn=_no_extra_remote_args,
        )


def _no_extra_remote_args() -> dict:
    return {}


class _Feeder:
    """Holds the texts of the batches in flight; the read task asks for them in order."""

    def __init__(self):
        self._texts: dict[int, list[str]] = {}
        self._released: set[int] = set()
        self._total: int | None = None
        self._changed = asyncio.Condition()

    async def put(self, seq: int, texts: list[str]) -> None:
        async with self._changed:
            self._texts[seq] = texts
            self._changed.notify_all()

    async def finish(self, total: int) -> None:
        async with self._changed:
            self._total = total
            self._changed.notify_all()

    async def release(self, seq: int) -> None:
        self._texts.pop(seq, None)
        self._released.add(seq)

    async def get(self, seq: int) -> list[str] | None:
        """The texts of batch `seq`; [] if it was already written; None after the last."""
        async with self._changed:
            while True:
                if seq in self._texts:
                    return self._texts[seq]
                if seq in self._released:
                    return []
                if self._total is not None and seq >= self._total:
                    return None
                await self._changed.wait()


def _feeder_source(feeder: Any) -> Any:
    """A Ray Data source of one read task that yields the feeder's batches in order."""
    from ray.data.datasource import Datasource, ReadTask

    class FeederSource(Datasource):
        def __init__(self, feeder: Any):
            self._feeder = feeder

        def estimate_inmemory_data_size(self) -> int | None:
            return None

        def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
            from ray.data.block import BlockMetadata

            feeder = self._feeder
            metadata = BlockMetadata(
                num_rows=None, size_bytes=None, input_files=None, exec_stats=None
            )
            return [ReadTask(lambda: _read_feeder(feeder), metadata)]

    return FeederSource(feeder)


def _read_feeder(feeder: Any) -> Iterator[Any]:
    """Yield batch 0, 1, 2 ... as one-row blocks (seq, texts) until the driver is done."""
    import pyarrow as pa
    import ray

    seq = 0
    while True:
        texts = ray.get(feeder.get.remote(seq))
        if texts is None:
            return
        yield pa.table(
            {"seq": pa.array([seq], pa.int64()), "texts": pa.array([texts], pa.list_(pa.string()))}
        )
        seq += 1


class _EncodeWorker:
    """One Ray actor: the index's model, loaded once, encoding every space of a batch."""

    def __init__(self, manifest_rows: dict[str, str], threads: int, version: str):
        import os
        import socket

        from indexer import config

        config.set_default(config.TOKENIZERS_PARALLELISM, "false")
        import torch

        from indexer.encoders.for_index import encoders_for
        from indexer.errors import ModelMismatch

        if version != __version__:
            raise InvalidSettings(
                f"this Ray worker runs ctxsearch {__version__}, the driver {version}: "
                "install the same version on the cluster"
            )
        torch.set_num_threads(threads)
        manifest = Manifest.from_rows(manifest_rows)
        try:
            # the precision the driver recorded for this run's chunks
            self._encoders = encoders_for(manifest, manifest.precision)
        except ModelMismatch as error:
            raise InvalidSettings(
                f"this Ray worker's model or packages differ from the driver's ({error}): "
                "install the same ones on the cluster"
            ) from error
        self._spaces = list(manifest.spaces)
        self._identity = f"{socket.gethostname()}:{os.getpid()}"

    def __call__(self, batch: Any) -> Any:
        """Encode each row (one batch of texts) into one row of vectors per space."""
        import pyarrow as pa

        from indexer.faults import kill_point

        seqs = batch.column("seq").to_pylist()
        columns: dict[str, list] = {}
        for texts in batch.column("texts").to_pylist():
            kill_point("worker-batch")
            for name in self._spaces:
                vectors = self._encoders[name].encode(texts)
                columns.setdefault(name, []).append(vectors.astype(np.float32).tobytes())
        return pa.table(
            {
                "seq": pa.array(seqs, pa.int64()),
                "worker": pa.array([self._identity] * len(seqs), pa.string()),
                **{name: pa.array(columns.get(name, []), pa.binary()) for name in self._spaces},
            }
        )
