"""Every environment variable ctxsearch reads, every folder it keeps, and their defaults.

`VARIABLES` and `FOLDERS` are the registry; `python -m indexer.config > docs/configuration.md`
writes its table (a test fails when that page is stale, and another when a module reads
the environment anywhere but here). Values are read when asked, never at import, so a
variable set after start-up (or by a test) counts; the module imports only the standard
library, so `ctxsearch --help` and `info` stay fast.

One cache root: `$CTXSEARCH_CACHE`, else `$XDG_CACHE_HOME/ctxsearch`, else
`~/.cache/ctxsearch`; the model cache and the evaluation cache are folders inside it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from indexer.errors import InvalidSettings

# What a variable is to ctxsearch: its own setting, a standard variable it relies on or
# passes on, or a seam only tests use.
SETTING = "setting"
STANDARD = "standard"
TEST_SEAM = "test seam"


@dataclass(frozen=True)
class Variable:
    """One environment variable: its name, what it means, its default, who reads it."""

    name: str
    meaning: str
    default: str
    used_by: str
    kind: str = SETTING


@dataclass(frozen=True)
class Folder:
    """One folder ctxsearch keeps: where it is, and what it holds."""

    name: str
    location: str
    holds: str


INDEX = Variable(
    "CTXSEARCH_INDEX",
    "The index a command uses when `--index` is not given: a folder, or a "
    "`postgresql+psycopg://` URL.",
    "`$XDG_DATA_HOME/ctxsearch/index` (`~/.local/share/ctxsearch/index`)",
    "every command's `--index`",
)
CACHE = Variable(
    "CTXSEARCH_CACHE",
    "The cache root: the model cache and the evaluation cache are folders inside it.",
    "`$XDG_CACHE_HOME/ctxsearch` (`~/.cache/ctxsearch`)",
    "`index` and `query` (the model cache), the lab commands (the evaluation cache)",
)
EVAL_CACHE = Variable(
    "CTXSEARCH_EVAL_CACHE",
    "The evaluation cache (a lab command's `--work-dir` when not given).",
    "`$CTXSEARCH_CACHE/eval` (`~/.cache/ctxsearch/eval`)",
    "`eval-index`, `lab eval`, `lab sts`, `lab wic`, `lab polysemy`, `lab neighbours`, "
    "`lab tune-fusion`",
)
HOST = Variable(
    "CTXSEARCH_HOST",
    "The machine name documents are stored under in a PostgreSQL index (each machine "
    "sees and removes only its own).",
    "the host name (`socket.gethostname()`)",
    "the PostgreSQL store",
)
BUSY_TIMEOUT_MS = Variable(
    "CTXSEARCH_BUSY_TIMEOUT_MS",
    "How long, in milliseconds, to wait for an SQLite index another program holds locked.",
    "`10000`",
    "the embedded store",
)
MAX_DELTAS = Variable(
    "CTXSEARCH_MAX_DELTAS",
    "How many delta segments a vector space of an index folder may hold: a run that "
    "would add one more folds its change and the youngest deltas into one (the base "
    "stays; `0`: every run writes whole spaces).",
    "`8`",
    "the embedded store",
)
POSTGRES_POOL = Variable(
    "CTXSEARCH_POSTGRES_POOL",
    "How many database connections a PostgreSQL index keeps open between queries: as many "
    "searches run at once without opening a connection (more open one each, closed after; "
    "the database's `max_connections` must allow every process's share).",
    "`40` (the searches `serve` runs at once: the worker threads of its thread pool)",
    "the PostgreSQL store",
)
QUERY_ENCODER = Variable(
    "CTXSEARCH_QUERY_ENCODER",
    "What encodes a query: `auto`, `onnx` or `torch`.",
    "`auto`",
    "`query --query-encoder`, `Searcher(query_encoder=)`",
)
DEFAULT_LINK_TEMPLATE = "vscode://file{path}:{line}"
LINK_TEMPLATE = Variable(
    "CTXSEARCH_LINK_TEMPLATE",
    "The editor link `--format link` prints per hit: `{path}` (absolute; percent-encoded "
    "when the template is a URL), `{line}`, `{column}`.",
    f"`{DEFAULT_LINK_TEMPLATE}`",
    "`query --link-template`, `similar --link-template`",
)
PRECISION = Variable(
    "CTXSEARCH_PRECISION",
    "What the contextual encoder computes in while indexing: `auto`, `fp32` or `bf16`.",
    "`auto`",
    "`index --precision`",
)
RAY = Variable(
    "CTXSEARCH_RAY",
    "Encode on a Ray cluster: `auto` or the head's address.",
    "unset (encode in this process)",
    "`index --ray`",
)
TOKEN = Variable(
    "CTXSEARCH_TOKEN",
    "The bearer token every data request to the server must carry.",
    "unset (no token: loopback only)",
    "`serve --token`, `lab loadtest --token`",
)
XDG_DATA_HOME = Variable(
    "XDG_DATA_HOME",
    "Where user data goes (the default index is inside it).",
    "`~/.local/share`",
    "the default of `$CTXSEARCH_INDEX`",
    STANDARD,
)
XDG_CACHE_HOME = Variable(
    "XDG_CACHE_HOME",
    "Where caches go (the default cache root is inside it).",
    "`~/.cache`",
    "the default of `$CTXSEARCH_CACHE`",
    STANDARD,
)
HF_HUB_OFFLINE = Variable(
    "HF_HUB_OFFLINE",
    "Hugging Face libraries stay offline; ctxsearch sets it to `1` when unset, so no "
    "model is downloaded unless asked.",
    "`1` (set by ctxsearch)",
    "loading a model, distilling Model2Vec",
    STANDARD,
)
TOKENIZERS_PARALLELISM = Variable(
    "TOKENIZERS_PARALLELISM",
    "Hugging Face tokenizers' own threads; set to `false` in Ray encoding actors.",
    "`false` in Ray actors (set by ctxsearch)",
    "`index --ray`",
    STANDARD,
)
RAY_ADDRESS = Variable(
    "RAY_ADDRESS",
    "The Ray cluster `--ray auto` joins (read by Ray itself).",
    "the cluster started on this machine, else a new local one",
    "`index --ray auto`",
    STANDARD,
)
PGPASSWORD = Variable(
    "PGPASSWORD",
    "The PostgreSQL password when the URL has none (read by libpq, as are `~/.pgpass` "
    "and the other `PG*` variables).",
    "none",
    "the PostgreSQL store",
    STANDARD,
)
KILL_AT = Variable(
    "CTXSEARCH_KILL_AT",
    "`NAME[:N]`: SIGKILL this process at the named point (the Nth time it is reached).",
    "unset",
    "`indexer.faults`: crash-safety tests",
    TEST_SEAM,
)
SIGINT_AT = Variable(
    "CTXSEARCH_SIGINT_AT",
    "`NAME[:N]`: send this process a SIGINT (a Ctrl-C) at the named point.",
    "unset",
    "`indexer.faults`: interruption tests",
    TEST_SEAM,
)
PAUSE_AT = Variable(
    "CTXSEARCH_PAUSE_AT",
    "`NAME:SECONDS`: sleep at every pass of the named point.",
    "unset",
    "`indexer.faults`: concurrency tests",
    TEST_SEAM,
)
HOLD_AT = Variable(
    "CTXSEARCH_HOLD_AT",
    "`NAME[:N]:FIFO`: stop at the first pass of the named point (the Nth) until the named "
    "pipe is opened for writing and closed.",
    "unset",
    "`indexer.faults`: concurrency tests",
    TEST_SEAM,
)

ORACLE_SEED = Variable(
    "CTXSEARCH_ORACLE_SEED",
    "`N`: the oracle machine and the read-surface differential run another seeded sequence; "
    "for a soak, the one its failure named, without a time budget.",
    "unset (derandomized; a soak draws a fresh seed for every run)",
    "`tests/reliability/test_oracle.py`, `tests/search/test_read_surfaces.py`, "
    "`tests.support.soak`",
    TEST_SEAM,
)
SOAK_SECONDS = Variable(
    "CTXSEARCH_SOAK_SECONDS",
    "`S`: each soak test (`-m soak`) starts no new example after S seconds.",
    "unset (each runs its profile's examples; `make test` sets it)",
    "`tests.support.soak`",
    TEST_SEAM,
)
ORACLE_EXAMPLES = Variable(
    "CTXSEARCH_ORACLE_EXAMPLES",
    "`N`: how many examples the oracle machine and the read-surface differential run.",
    "the profile's",
    "`tests/reliability/test_oracle.py`, `tests/search/test_read_surfaces.py`",
    TEST_SEAM,
)
ORACLE_STEPS = Variable(
    "CTXSEARCH_ORACLE_STEPS",
    "`N`: how many steps each example of the oracle machine takes.",
    "the profile's",
    "`tests/reliability/test_oracle.py`",
    TEST_SEAM,
)
ORACLE_SHRINK = Variable(
    "CTXSEARCH_ORACLE_SHRINK",
    "`0`: the oracle machine does not shrink a failing sequence.",
    "`1`",
    "`tests/reliability/test_oracle.py`",
    TEST_SEAM,
)
ORACLE_STILL_OPEN = Variable(
    "CTXSEARCH_ORACLE_STILL_OPEN",
    "Names of known defects (comma-separated) taken as not fixed: the guards leave out "
    "their rules and checks, and each one's focused test must find it. To check that a "
    "guard finds a defect again on a commit that reverts its fix.",
    "`STILL_OPEN` in `tests/support/known_defects.py`",
    "`tests/support/known_defects.py`",
    TEST_SEAM,
)
ORACLE_VERBOSE = Variable(
    "CTXSEARCH_ORACLE_VERBOSE",
    "Set: the oracle machine prints every step.",
    "unset",
    "`tests/reliability/test_oracle.py`",
    TEST_SEAM,
)

VARIABLES = (
    INDEX,
    CACHE,
    EVAL_CACHE,
    HOST,
    BUSY_TIMEOUT_MS,
    MAX_DELTAS,
    POSTGRES_POOL,
    QUERY_ENCODER,
    LINK_TEMPLATE,
    PRECISION,
    RAY,
    TOKEN,
    XDG_DATA_HOME,
    XDG_CACHE_HOME,
    HF_HUB_OFFLINE,
    TOKENIZERS_PARALLELISM,
    RAY_ADDRESS,
    PGPASSWORD,
    KILL_AT,
    SIGINT_AT,
    PAUSE_AT,
    HOLD_AT,
    ORACLE_SEED,
    SOAK_SECONDS,
    ORACLE_EXAMPLES,
    ORACLE_STEPS,
    ORACLE_SHRINK,
    ORACLE_STILL_OPEN,
    ORACLE_VERBOSE,
)

FOLDERS = (
    Folder(
        "the default index",
        "`$CTXSEARCH_INDEX`, else `$XDG_DATA_HOME/ctxsearch/index` "
        "(`~/.local/share/ctxsearch/index`)",
        "the index every command uses without `--index`",
    ),
    Folder(
        "the cache root",
        "`$CTXSEARCH_CACHE`, else `$XDG_CACHE_HOME/ctxsearch` (`~/.cache/ctxsearch`)",
        "the two caches below; everything in it can be made again",
    ),
    Folder(
        "the model cache",
        "`models/` in the cache root",
        "the query model's ONNX export and token table (`onnx-FINGERPRINT`, or a note of "
        "why the export failed), distilled Model2Vec models (`model2vec-KEY`)",
    ),
    Folder(
        "the evaluation cache",
        "`$CTXSEARCH_EVAL_CACHE`, else `eval/` in the cache root",
        "encoded corpora and their exact indexes, `static-models/` (trained word vectors, "
        "distilled models), `files/` (`eval-index`'s corpus as files), `index-NAME-KEY/` "
        "(indexes of BEIR splits)",
    ),
)


def read(variable: Variable) -> str | None:
    """The variable's value now, or None when it is unset or empty."""
    return os.environ.get(variable.name) or None


def set_default(variable: Variable, value: str) -> None:
    """Give a standard variable ctxsearch relies on its value, unless the user set one."""
    os.environ.setdefault(variable.name, value)


def _folder(variable: Variable, fallback: Path) -> Path:
    given = read(variable)
    return Path(given).expanduser() if given else fallback


def data_home() -> Path:
    """$XDG_DATA_HOME, else ~/.local/share."""
    return _folder(XDG_DATA_HOME, Path.home() / ".local" / "share")


def cache_home() -> Path:
    """$XDG_CACHE_HOME, else ~/.cache."""
    return _folder(XDG_CACHE_HOME, Path.home() / ".cache")


def index_location() -> str:
    """The index a command uses without `--index`: $CTXSEARCH_INDEX (a folder or a database
    URL, as given), else $XDG_DATA_HOME/ctxsearch/index."""
    return read(INDEX) or str(data_home() / "ctxsearch" / "index")


def cache_dir() -> Path:
    """The cache root: $CTXSEARCH_CACHE, else $XDG_CACHE_HOME/ctxsearch (~/.cache/ctxsearch)."""
    return _folder(CACHE, cache_home() / "ctxsearch")


def model_cache_dir() -> Path:
    """Where ONNX exports of the query model and distilled static models are kept."""
    return cache_dir() / "models"


def token_memo_dir() -> Path:
    """Where the token spans of large documents are kept between processes."""
    return cache_dir() / "tokens"


def eval_cache_dir() -> Path:
    """The evaluation cache: $CTXSEARCH_EVAL_CACHE, else `eval` in the cache root."""
    return _folder(EVAL_CACHE, cache_dir() / "eval")


def busy_timeout_ms() -> int:
    """How long to wait for an SQLite database another program holds locked."""
    return _whole_number(BUSY_TIMEOUT_MS, 10000, 0, " of milliseconds")


def max_deltas() -> int:
    """How many delta segments a space of an index folder may hold before a merge."""
    return _whole_number(MAX_DELTAS, 8, 0, "")


def postgres_pool() -> int:
    """How many connections a PostgreSQL index keeps open for its searches."""
    return _whole_number(POSTGRES_POOL, 40, 1, " of connections (1 or more)")


def _whole_number(variable: Variable, default: int, least: int, unit: str) -> int:
    """`variable` as a whole number of at least `least` (`default` when unset);
    `InvalidSettings` naming it and `unit` otherwise."""
    given = read(variable)
    if given is None:
        return default
    try:
        number = int(given)
    except ValueError:
        number = least - 1
    if number < least:
        raise InvalidSettings(f"${variable.name} must be a whole number{unit}, not {given!r}")
    return number


def host_name() -> str:
    """The name this machine's documents are stored under: $CTXSEARCH_HOST, else the host
    name."""
    import socket

    return read(HOST) or socket.gethostname()


def query_encoder() -> str:
    """What encodes a query when the caller does not say: $CTXSEARCH_QUERY_ENCODER, else
    `auto` (checked by `indexer.encoders.query`)."""
    return read(QUERY_ENCODER) or "auto"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def reference() -> str:
    """The page `docs/configuration.md`: every variable, then every folder."""
    lines = [
        "# Configuration",
        "",
        "Every environment variable ctxsearch reads or sets, and every folder it keeps. This",
        "page is generated from `indexer/config.py`:",
        "`python -m indexer.config > docs/configuration.md` (a test fails when it is stale).",
        "A command-line option beats its variable; an unset or empty variable means its default.",
        "",
        "| variable | meaning | default | used by |",
        "|---|---|---|---|",
    ]
    for variable in VARIABLES:
        meaning = variable.meaning
        if variable.kind != SETTING:
            meaning = f"*{variable.kind}:* {meaning}"
        cells = [f"`{variable.name}`", meaning, variable.default, variable.used_by]
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    lines += [
        "",
        "*standard* variables are not ctxsearch's own: it relies on them or passes them on.",
        "*test seam* variables exist for the test suite; nothing happens when they are unset.",
        "",
        "## Folders",
        "",
        "| folder | where | holds |",
        "|---|---|---|",
    ]
    for folder in FOLDERS:
        cells = [folder.name, folder.location, folder.holds]
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(reference(), end="")
