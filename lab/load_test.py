"""A bounded load test of a running server: N concurrent clients for a fixed time.

Each client is a thread with its own `httpx.Client` (one keep-alive connection) that sends
`GET /search` requests back to back until the time is up, cycling through the queries.
A request counts as an error unless it answers 200 with the JSON of a search.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import asdict, dataclass, field

import httpx

from indexer.errors import CtxsearchError
from search.modes import DEFAULT_MODE

DEFAULT_QUERIES = (
    "where can I open a savings account at the bank",
    "the python swallowed its prey whole",
    "jaguar engine and leather seats",
    "how do tower cranes stay upright",
    "erosion along the bank after the flood",
    "pitch of a roof",
    "coffee from java",
    "why do dogs bark at night",
)
_ERROR_SAMPLES = 5


class ServerUnreachable(CtxsearchError):
    """No ctxsearch server answers at the URL given."""


@dataclass
class LoadReport:
    """What a load test measured. Latencies are in milliseconds, per request."""

    url: str
    mode: str
    clients: int
    seconds: float
    requests: int
    errors: int
    requests_per_second: float
    p50_ms: float
    p95_ms: float
    max_ms: float
    error_samples: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The report as plain JSON-ready values."""
        return asdict(self)

    @property
    def succeeded(self) -> int:
        """How many requests got a good answer."""
        return self.requests - self.errors


class NothingSucceeded(CtxsearchError):
    """A load test in which no request got a good answer (bad token, wrong URL, ...)."""


@dataclass
class _Tally:
    """Latencies and errors gathered by every client thread."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, latency: float, error: str | None) -> None:
        with self.lock:
            self.latencies.append(latency)
            if error is not None:
                self.errors += 1
                if len(self.error_samples) < _ERROR_SAMPLES:
                    self.error_samples.append(error)


def run_load(
    url: str,
    clients: int = 8,
    seconds: float = 20.0,
    mode: str = DEFAULT_MODE.value,
    k: int = 10,
    queries: tuple[str, ...] = DEFAULT_QUERIES,
    token: str | None = None,
) -> LoadReport:
    """Send searches from `clients` threads for `seconds`; report throughput and latency.

    A non-ASCII token is sent as its UTF-8 bytes, as `ctxsearch serve` expects it."""
    url = url.rstrip("/")
    headers = {"Authorization": f"Bearer {token}".encode()} if token else {}
    _check_reachable(url)
    tally = _Tally()
    started = time.perf_counter()
    deadline = started + seconds
    threads = [
        threading.Thread(
            target=_client,
            args=(url, headers, queries, mode, k),
            kwargs={"first": number, "deadline": deadline, "tally": tally},
        )
        for number in range(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    latencies = sorted(tally.latencies)
    return LoadReport(
        url=url,
        mode=mode,
        clients=clients,
        seconds=round(elapsed, 2),
        requests=len(latencies),
        errors=tally.errors,
        requests_per_second=round(len(latencies) / elapsed, 1),
        p50_ms=_percentile(latencies, 50),
        p95_ms=_percentile(latencies, 95),
        max_ms=round(latencies[-1] * 1000, 1) if latencies else 0.0,
        error_samples=tally.error_samples,
    )


def _check_reachable(url: str) -> None:
    try:
        httpx.get(f"{url}/health", timeout=10).raise_for_status()
    except httpx.HTTPError as error:
        raise ServerUnreachable(f"{url}: no ctxsearch server answers ({error})") from error


def _client(
    url: str,
    headers: dict[str, bytes],
    queries: tuple[str, ...],
    mode: str,
    k: int,
    *,
    first: int,
    deadline: float,
    tally: _Tally,
) -> None:
    """One client: requests back to back, starting at its own place in the queries."""
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        sent = first
        while time.perf_counter() < deadline:
            query = queries[sent % len(queries)]
            sent += 1
            began = time.perf_counter()
            try:
                response = client.get("/search", params={"q": query, "k": k, "mode": mode})
                error = _problem(response)
            except Exception as failure:  # every failure is counted; none kills the client
                error = f"{type(failure).__name__}: {failure}"
            tally.record(time.perf_counter() - began, error)


def _problem(response: httpx.Response) -> str | None:
    if response.status_code != 200:
        return f"HTTP {response.status_code}: {response.text[:200]}"
    if "results" not in response.json():
        return "a 200 answer without results"
    return None


def _percentile(ordered: list[float], percent: int) -> float:
    """The `percent`th percentile in milliseconds (linear between the nearest ranks)."""
    if not ordered:
        return 0.0
    if len(ordered) == 1:
        return round(ordered[0] * 1000, 1)
    cut = statistics.quantiles(ordered, n=100, method="inclusive")[percent - 1]
    return round(cut * 1000, 1)
