"""The `index` command's writer options, made from the writer settings
(`indexer.runs.write_settings`): the same names, defaults, choices, environment variables
and help, and one `WriteSettings` for the command instead of an argument per option."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from indexer.runs.write_settings import Setting, WriteSettings, setting_fields

F = TypeVar("F", bound=Callable[..., Any])


def write_options(command: F) -> F:
    """The command with an option for every writer setting that has one, in the
    settings' order."""
    for name, default, setting in reversed(list(setting_fields())):
        if setting.option is not None:
            option = click.option(setting.option, name, **_click_settings(setting, default))
            command = option(command)
    return command


def takes_settings(command: F) -> F:
    """The command with its writer options collapsed into one `settings` argument: a
    `WriteSettings` made and checked before the command runs (`InvalidSettings`, which
    `translate_errors` above makes a usage error)."""
    names = [name for name, _default, setting in setting_fields() if setting.option]

    @functools.wraps(command)
    def wrapper(**given: Any) -> Any:
        settings = WriteSettings(**{name: given.pop(name) for name in names})
        return command(settings=settings, **given)

    return wrapper  # type: ignore[return-value]


def _click_settings(setting: Setting, default: Any) -> dict[str, Any]:
    """Click's type, default, environment variable and help for a setting. A choice
    offers its choices; a whole number is bounded as the setting is."""
    help_text = setting.help
    settings: dict[str, Any] = {"default": default, "show_default": default is not None}
    if setting.variable is not None:
        settings["envvar"] = setting.variable.name
        help_text += f" [env: {setting.variable.name}]"
    if setting.metavar is not None:
        settings["metavar"] = setting.metavar
    if setting.choices:
        settings["type"] = click.Choice(setting.choices)
    elif setting.least is not None:
        settings["type"] = click.IntRange(min=setting.least)
    return {**settings, "help": help_text}
