"""Commands other packages add to `ctxsearch`, found through entry points and loaded only
when one runs.

A package adds a command with an entry point `NAME = "module:command"` in the group
`ctxsearch.commands` (listed by `ctxsearch --help`) or `ctxsearch.hidden_commands` (run by
name, never listed: old names kept so that scripts keep working). Listing them reads
only the installed packages' metadata, so `ctxsearch --help` imports none of them.
"""

from __future__ import annotations

import functools
from importlib.metadata import EntryPoint, entry_points

import click

SHOWN = "ctxsearch.commands"
HIDDEN = "ctxsearch.hidden_commands"


@functools.cache
def _entry_points(group: str) -> dict[str, EntryPoint]:
    return {entry.name: entry for entry in entry_points(group=group)}


def _load(entry: EntryPoint) -> click.Command:
    """The command an entry point names; one line if it cannot be imported."""
    try:
        command = entry.load()
    except ImportError as error:
        raise click.ClickException(
            f"cannot load `{entry.name}` ({entry.value}): {error}"
        ) from error
    if not isinstance(command, click.Command):
        raise click.ClickException(f"`{entry.name}` ({entry.value}) is not a click command")
    return command


class ExtensibleGroup(click.Group):
    """A click group whose commands are its own plus those the entry points add."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The commands `--help` lists: the group's own and the shown entry points'."""
        return sorted({*super().list_commands(ctx), *_entry_points(SHOWN)})

    def hidden_commands(self) -> list[str]:
        """The names run but never listed (`ctxsearch.hidden_commands`)."""
        return sorted(set(_entry_points(HIDDEN)) - set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        own = super().get_command(ctx, name)
        if own is not None:
            return own
        entry = _entry_points(SHOWN).get(name) or _entry_points(HIDDEN).get(name)
        return None if entry is None else _load(entry)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's list of commands, but an entry point's is described without loading it."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if command is None:
                rows.append((name, f"More commands: ctxsearch {name} --help"))
            elif not command.hidden:
                rows.append((name, command))
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        shown = [
            (name, text if isinstance(text, str) else text.get_short_help_str(limit))
            for name, text in rows
        ]
        with formatter.section("Commands"):
            formatter.write_dl(shown)
