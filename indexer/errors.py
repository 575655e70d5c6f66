"""Typed exceptions raised by the library.

Only the edges (the CLI and the HTTP server) turn these into messages and exit codes;
the library never prints or exits.
"""

from __future__ import annotations


class CtxsearchError(Exception):
    """Base class of every error ctxsearch raises on purpose."""


class IndexNotFound(CtxsearchError):
    """The index directory does not exist or holds no ctxsearch index."""


class DocumentNotFound(CtxsearchError):
    """No document with the id asked for is in the index."""


class NotFilledYet(DocumentNotFound):
    """A passage asked for by its vector has none yet: the run that stored it is still
    filling the contextual space (`indexer.runs.fill`)."""


class IndexCorrupt(CtxsearchError):
    """The index exists but one of its files cannot be read."""


class SpaceFileMissing(IndexCorrupt):
    """A vector space file the published generation needs is not on disk (a reader may
    meet this in the instant a writer publishes and sweeps; `repair` rebuilds it)."""


class IndexLocked(CtxsearchError):
    """Another process is writing the index (or holds its database locked)."""


class ModelMismatch(CtxsearchError):
    """The model or pooling asked for differs from the one the index was built with."""


class ModelNotAvailable(CtxsearchError):
    """The model cannot be loaded from local files (nothing is downloaded implicitly)."""


class UnreadableFile(CtxsearchError):
    """A source file could not be read or decoded; the run counts it and goes on. Raised
    as such, the failure may pass (no permission, an I/O error, a file changing while it
    is read): the file's older indexed version is kept."""


class UnindexableContent(UnreadableFile):
    """A file whose bytes, read whole, give no text to index (binary, corrupt, encrypted,
    no text layer, over the size cap or a limit of what reading may make): the same bytes
    fail the same way every time, so the file's older indexed version is removed."""


class ReadingTooSlow(UnreadableFile):
    """A file whose reading passed the time limit: that depends on the machine's load as
    much as on the file, so its older indexed version is kept."""


class SourceNotFound(CtxsearchError):
    """The folder to index does not exist or is not a folder."""


class InvalidQuery(CtxsearchError):
    """The query text or its options are unusable (empty text, k <= 0, unknown space)."""


class InvalidTarget(CtxsearchError):
    """`--index` names something that cannot be an index (a malformed URL, say)."""


class StoreUnavailable(CtxsearchError):
    """The database holding the index cannot be reached or is not ready (no pgvector)."""


class StoreWriteFailed(CtxsearchError):
    """The index could not be written (disk full, read-only); it is left as it was."""


class IndexClosed(CtxsearchError):
    """The `Searcher` (or store) was closed and answers no more."""


class InvalidSettings(CtxsearchError):
    """An indexing setting that cannot work (an unknown pooling, a negative overlap ...)."""


class InvalidPattern(InvalidSettings):
    """An --exclude or --include pattern that is not valid gitignore syntax (it is named)."""


class InvalidIgnoreFile(CtxsearchError):
    """A folder's `.ctxsearchignore` cannot be used (a line that is not a valid pattern, or
    text that is not UTF-8): the folder is not indexed until the file is fixed."""


class MissingDependency(CtxsearchError):
    """A method needs an optional package that is not installed (named with its extra)."""


class EncodingFailed(CtxsearchError):
    """The Ray cluster could not encode a run's chunks; the index is left as it was."""


class NotIndexed(CtxsearchError):
    """A path to remove from the index has no indexed document or root."""


class InvalidRecord(InvalidQuery):
    """A record to upsert or delete is unusable (no id, empty text, nested metadata ...)."""
