"""The command line's search options, made from the request's parameters
(`search.request`): the same flags, types, bounds and help, and one `SearchRequest`
for the command instead of an argument per option."""

from __future__ import annotations

import functools
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import click

from search.paths import given_path
from search.request import Kind, Parameter, parameter_of, parameters, search_request

F = TypeVar("F", bound=Callable[..., Any])
Decorator = Callable[[F], F]


def parameter_option(name: str, *declarations: str, **changes: Any) -> Decorator:
    """The click option of one request parameter (the argument TEXT, for the query).
    `declarations` replace its flag and name (compare's `--against` is a mode too) and
    `changes` its click settings (compare's own help for `-k`, say)."""
    default, parameter = parameter_of(name)
    if parameter.kind is Kind.TEXT:
        return click.argument(name, metavar=parameter.metavar, **changes)
    settings = {**_click_settings(parameter, default), **changes}
    if isinstance(settings.get("default"), Enum):
        settings["default"] = settings["default"].value
    return click.option(*(declarations or (parameter.flag, name)), **settings)


def request_options(group: str) -> Decorator:
    """The options of every request parameter in `group` (`search` or `filter`), in the
    request's order, each followed by its older name as a hidden option if it has one."""
    options = []
    for name, _default, parameter in parameters():
        if parameter.group != group:
            continue
        options.append(parameter_option(name))
        if parameter.old_name is not None:
            options.append(_old_option(parameter))

    def decorate(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def takes_request(command: F) -> F:
    """The command with its request options collapsed into one `request` argument, a
    `SearchRequest` built and checked before the command runs (`InvalidQuery`, which
    `translate_errors` above makes a usage error)."""
    names = set()
    for name, _default, parameter in parameters():
        names.add(name)
        if parameter.old_name is not None:
            names.add(parameter.old_name)

    @functools.wraps(command)
    def wrapper(**given: Any) -> Any:
        asked = {name: given.pop(name) for name in names if name in given}
        return command(request=search_request(**asked), **given)

    return wrapper  # type: ignore[return-value]


def _click_settings(parameter: Parameter, default: Any) -> dict[str, Any]:
    """Click's type, default and help for a parameter. A whole number is left to the
    request to check, whose message names it (`k must be at most 1000`); a real number
    gets click's range, and click's message."""
    settings: dict[str, Any] = {"help": parameter.help}
    if parameter.metavar is not None:
        settings["metavar"] = parameter.metavar
    kind = parameter.kind
    if kind is Kind.FLAG:
        return {**settings, "is_flag": True, "default": default}
    if kind in (Kind.TEXTS, Kind.PAIRS):
        return {**settings, "multiple": True}
    if kind is Kind.PLACES:
        return {
            **settings,
            "multiple": True,
            "type": click.Path(path_type=Path),
            "callback": _absolute_paths,
        }
    settings["default"] = default
    settings["show_default"] = default is not None
    if kind is Kind.WHOLE:
        settings["type"] = click.INT
    elif kind is Kind.NUMBER:
        settings["type"] = click.FloatRange(parameter.low, parameter.high)
    elif kind is Kind.CHOICE:
        settings["type"] = click.Choice(parameter.choices)
    return settings


def _old_option(parameter: Parameter) -> Decorator:
    assert parameter.old_name is not None
    flag = "--" + parameter.old_name.replace("_", "-")
    return click.option(
        flag,
        parameter.old_name,
        type=click.Choice(parameter.choices) if parameter.choices else None,
        hidden=True,
        help=f"Old name of {parameter.flag}.",
    )


def _absolute_paths(_ctx: Any, _param: Any, places: tuple[Path, ...]) -> tuple[str, ...]:
    """Folders and files made absolute, no link resolved; the command finds each as the
    index names it (`search.paths.as_indexed`) once it has the index."""
    return tuple(given_path(place) for place in places)
