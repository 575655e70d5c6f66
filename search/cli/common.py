"""Pieces every ctxsearch command shares: error translation, common options, JSON output."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from indexer.errors import (
    CtxsearchError,
    IndexLocked,
    IndexNotFound,
    InvalidQuery,
    MissingDependency,
    ModelMismatch,
    SourceNotFound,
)
from search.paths import INDEX_ENV, default_index_dir

F = TypeVar("F", bound=Callable[..., Any])

# Errors the user can fix by changing the command: exit 2, like click's own usage errors.
_USAGE_ERRORS = (InvalidQuery, SourceNotFound, IndexNotFound, ModelMismatch)
EXIT_BUSY = 3
# `index` finished, but some files could not be read (each is named on stderr).
EXIT_PARTIAL = 4


class BusyError(click.ClickException):
    """The index is being written by another process: exit 3, try again later."""

    exit_code = EXIT_BUSY


class MissingExtraError(click.ClickException):
    """A method's optional package is missing: one line naming the extra, exit 2."""

    exit_code = 2


def translate_errors(command: F) -> F:
    """Turn the library's typed exceptions (and database errors) into one-line errors."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except _USAGE_ERRORS as error:
            raise click.UsageError(str(error)) from error
        except IndexLocked as error:
            raise BusyError(str(error)) from error
        except MissingDependency as error:
            raise MissingExtraError(str(error)) from error
        except CtxsearchError as error:
            raise click.ClickException(str(error)) from error
        except Exception as error:
            if type(error).__module__.startswith("sqlalchemy"):
                raise _database_error(error) from error
            if isinstance(error, OSError) and error.filename:
                raise click.ClickException(f"{error.filename}: {error.strerror}") from error
            raise

    return wrapper  # type: ignore[return-value]


def _database_error(error: Exception) -> click.ClickException:
    message = str(getattr(error, "orig", error)).strip().splitlines()[0]
    if "locked" in message or "busy" in message:
        return BusyError(f"the index database is locked by another program ({message})")
    return click.ClickException(f"the index database failed: {message}")


index_option = click.option(
    "--index",
    "index_dir",
    type=click.Path(file_okay=True, path_type=Path),
    default=default_index_dir,
    show_default=f"${INDEX_ENV} or ~/.local/share/ctxsearch/index",
    help="The index directory.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")


def echo_json(value: Any) -> None:
    """Print a value as indented JSON on stdout."""
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))
