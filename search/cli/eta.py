"""How far an indexing run is, in chunks encoded, and how long it has left.

The unit of work is a chunk through the encoder: reading and chunking cost little next to
it. But the pipeline streams files, so the number of chunks is known only for the files
read so far. The estimate of the run's total converts the bytes still to read into
chunks at the rate measured so far in this run (chunks per byte of the files read), and
adds the chunks already known. The rate is the run's chunks encoded per second since its
files began to be read (model loading left out), and the time left is the estimated
chunks still to encode divided by that rate. Both sharpen as the run goes; once every
file is read the total is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

from indexer.runs.indexer import Progress


@dataclass(frozen=True)
class Estimate:
    """The run's estimated total of chunks (exact once every file is read), its rate in
    chunks per second and the seconds left (None until a chunk has been encoded)."""

    total_chunks: int
    exact: bool
    chunks_per_second: float | None
    seconds_left: float | None


def estimate(event: Progress, elapsed: float) -> Estimate:
    """The estimate for an `index` report seen `elapsed` seconds after files began."""
    remaining_bytes = max(event.bytes_total - event.bytes_read, 0)
    exact = remaining_bytes == 0
    total = event.chunks_known
    if not exact and event.bytes_read > 0:
        total += round(remaining_bytes * event.chunks_known / event.bytes_read)
    total = max(total, event.encoded)
    rate = event.encoded / elapsed if event.encoded and elapsed > 0 else None
    left = (total - event.encoded) / rate if rate else None
    return Estimate(total, exact, rate, left)


def clock(seconds: float) -> str:
    """Seconds as `m:ss`, or `h:mm:ss` from an hour."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
