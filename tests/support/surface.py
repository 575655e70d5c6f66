"""What users and other programs rely on: every command and option of the CLI (the lab's
under `lab`, and the hidden names kept for old scripts), every HTTP endpoint with its query
parameters and JSON body keys. `python -m tests.support.surface` prints it as JSON;
tests/data/surface-before-issue-25.json holds it as recorded on purpose (first before issue
25's consolidation, last when the lab's commands moved under `lab`), and a test checks
that nothing of it has gone since."""

from __future__ import annotations

import json
import sys

import click


def cli_surface() -> dict[str, list[str]]:
    """Each command (`index`, `lab eval`, ..., and the hidden ones) with the sorted flags
    of its options."""
    from search.cli.main import cli

    context = click.Context(cli)
    found: dict[str, list[str]] = {}

    def visit(command: click.Command, name: str) -> None:
        flags = sorted(
            flag
            for parameter in command.params
            for flag in (*parameter.opts, *parameter.secondary_opts)
            if isinstance(parameter, click.Option)
        )
        arguments = [p.human_readable_name for p in command.params if isinstance(p, click.Argument)]
        found[name] = flags + [f"<{argument}>" for argument in arguments]
        if isinstance(command, click.Group):
            for sub_name in command.list_commands(context):
                visit(command.get_command(context, sub_name), f"{name} {sub_name}".strip())

    visit(cli, "")
    for hidden in hidden_commands():
        visit(cli.get_command(context, hidden), hidden)
    return found


def hidden_commands() -> list[str]:
    """The commands `ctxsearch` runs but does not list: old names kept for scripts."""
    from search.cli.main import cli

    return cli.hidden_commands()


def http_surface() -> dict[str, list[str]]:
    """Each `METHOD /path` with its query parameters and the keys its JSON body takes."""
    from types import SimpleNamespace

    from search.server.app import create_app

    # the schema needs no index: a writer is only asked for its queue
    writer = SimpleNamespace(queue=None)
    schema = create_app(object(), writer=writer).openapi()  # type: ignore[arg-type]
    components = schema.get("components", {}).get("schemas", {})
    found: dict[str, list[str]] = {}
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            keys = [f"?{p['name']}" for p in operation.get("parameters", [])]
            body = operation.get("requestBody", {}).get("content", {})
            reference = body.get("application/json", {}).get("schema", {}).get("$ref", "")
            if reference:
                properties = components[reference.rsplit("/", 1)[-1]].get("properties", {})
                keys += [f"body.{key}" for key in properties]
            found[f"{method.upper()} {path}"] = sorted(keys)
    return found


def surface() -> dict[str, dict[str, list[str]]]:
    """The CLI's and the HTTP API's surface together, and which commands are hidden."""
    return {"cli": cli_surface(), "hidden": hidden_commands(), "http": http_surface()}


if __name__ == "__main__":
    json.dump(surface(), sys.stdout, indent=1, sort_keys=True)
    print()
