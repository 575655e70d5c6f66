"""Pieces every ctxsearch command shares: error translation, common options, JSON output."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from indexer.errors import (
    CtxsearchError,
    IndexLocked,
    IndexNotFound,
    InvalidQuery,
    InvalidSettings,
    InvalidTarget,
    MissingDependency,
    ModelMismatch,
    NotIndexed,
    SourceNotFound,
)
from search.paths import INDEX_ENV, default_index, index_target
from search.text import json_text, terminal_text

F = TypeVar("F", bound=Callable[..., Any])

# Errors the user can fix by changing the command: exit 2, like click's own usage errors.
_USAGE_ERRORS = (
    InvalidQuery,
    InvalidSettings,
    InvalidTarget,
    SourceNotFound,
    IndexNotFound,
    ModelMismatch,
    NotIndexed,
)
EXIT_BUSY = 3
# `index` finished, but some files could not be read (each is named on stderr).
EXIT_PARTIAL = 4


class BusyError(click.ClickException):
    """The index is being written by another process: exit 3, try again later."""

    exit_code = EXIT_BUSY


class BadInputError(click.ClickException):
    """What the command was given is wrong (a value, a file's content), not how it is
    written: exit 2 like a usage error, in one line, without click's usage lines."""

    exit_code = 2


class MissingExtraError(click.ClickException):
    """A method's optional package is missing: one line naming the extra, exit 2."""

    exit_code = 2


def translate_errors(command: F) -> F:
    """Turn the library's typed exceptions into one-line errors and exit codes."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except _USAGE_ERRORS as error:
            raise BadInputError(terminal_text(error)) from error
        except IndexLocked as error:
            raise BusyError(terminal_text(error)) from error
        except MissingDependency as error:
            raise MissingExtraError(terminal_text(error)) from error
        except CtxsearchError as error:
            raise click.ClickException(terminal_text(error)) from error
        except BrokenPipeError:  # `ctxsearch info | head`: the reader left, nothing to say
            _quiet_broken_stdout()
            sys.exit(141)  # 128 + SIGPIPE, as a tool the pipe's signal stopped
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            message = terminal_text(f"{where}{error.strerror or error}")
            raise click.ClickException(message) from error

    return wrapper  # type: ignore[return-value]


def _quiet_broken_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises nothing more."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


class IndexTarget(click.ParamType):
    """`--index`: a folder (the embedded store) or a postgresql+psycopg:// URL."""

    name = "FOLDER|URL"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        return value if isinstance(value, Path) else index_target(str(value))


index_option = click.option(
    "--index",
    "target",
    type=IndexTarget(),
    default=default_index,
    show_default=f"${INDEX_ENV} or ~/.local/share/ctxsearch/index",
    help="The index: a folder, or a postgresql+psycopg://USER@HOST:PORT/DB URL.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")


def echo_json(value: Any) -> None:
    """Print a value as indented JSON on stdout: exact (it decodes to `value`), and safe
    on a terminal (controls, direction overrides and lone surrogates are escaped)."""
    click.echo(json_text(value, indent=2))
