"""A Ctrl-C during a command: one line and the shell's code for it, never click's
`Aborted!` with exit 1."""

from __future__ import annotations

from typing import Any

import click

from search.cli.exit_codes import EXIT_INTERRUPTED
from search.cli.extensions import ExtensibleGroup


class InterruptibleGroup(ExtensibleGroup):
    """The `ctxsearch` group: a KeyboardInterrupt inside a command ends the process with
    `ctxsearch: interrupted` and exit 130. What a run published stays published (every
    publish is atomic); the next `index` run goes on from there."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("ctxsearch: interrupted", err=True)
            raise SystemExit(EXIT_INTERRUPTED) from None
