"""The command line: `ctxsearch` and its commands (one module per group of commands).

This module stays light: `main` loads the commands itself, so that a Ctrl-C landing while
they load ends the process with one line instead of a traceback.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from search.cli.exit_codes import EXIT_INTERRUPTED

if TYPE_CHECKING:
    from search.cli.main import cli

__all__ = ["cli", "main"]


def main() -> None:
    """Entry point of the `ctxsearch` console script."""
    try:
        from search.cli.main import cli
    except KeyboardInterrupt:
        print("ctxsearch: interrupted before the command started", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None
    cli(prog_name="ctxsearch")


def __getattr__(name: str) -> Any:
    if name == "cli":
        from search.cli.main import cli

        return cli
    raise AttributeError(f"module 'search.cli' has no attribute {name!r}")
