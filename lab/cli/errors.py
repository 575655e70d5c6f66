"""The lab commands' errors: the product's translation, and one line naming the `lab`
extra when one of its packages is missing (searching and indexing never need them)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from search.cli.common import MissingExtraError, translate_errors

F = TypeVar("F", bound=Callable[..., Any])

LAB_EXTRA = "ctxsearch[lab]"
LAB_PACKAGES = frozenset({"scipy", "matplotlib"})


def translate_lab_errors(command: F) -> F:
    """`translate_errors`, and a missing lab package as one line naming the extra, exit 2."""
    translated = translate_errors(command)

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return translated(*args, **kwargs)
        except ModuleNotFoundError as error:
            package = (error.name or "").split(".")[0]
            if package not in LAB_PACKAGES:
                raise
            raise MissingExtraError(
                f"this command needs the package {package}: pip install '{LAB_EXTRA}'"
            ) from error

    return wrapper  # type: ignore[return-value]
