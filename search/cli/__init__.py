"""The command line: `ctxsearch` and its commands (one module per group of commands)."""

from search.cli.main import cli, main

__all__ = ["cli", "main"]
