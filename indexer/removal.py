"""`remove_path`, where code written for ctxsearch 0.1 imports it from (`indexer.removal`);
it lives in `indexer.runs.removal`, and `from indexer import remove_path` is the public name."""

from indexer.runs.removal import remove_path

__all__ = ["remove_path"]
