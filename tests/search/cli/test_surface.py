"""Nothing users or other programs rely on goes away: every command, option and argument of
the CLI and every HTTP endpoint, query parameter and body key recorded in
tests/data/surface-before-issue-25.json (recorded on purpose, last when the lab's commands
moved under `ctxsearch lab`) is still there, and the commands recorded as hidden (old
names kept for scripts) still run without being listed."""

from __future__ import annotations

import json

from tests.conftest import ROOT
from tests.support.surface import surface

RECORD = ROOT / "tests" / "data" / "surface-before-issue-25.json"


def test_every_command_option_endpoint_and_key_recorded_is_still_there():
    before = json.loads(RECORD.read_text())
    now = surface()
    gone = [
        f"{part} {name}: {sorted(set(keys) - set(now[part].get(name, [])))}"
        for part in ("cli", "http")
        for name, keys in before[part].items()
        if name not in now[part] or set(keys) - set(now[part][name])
    ]
    assert gone == [], "gone since recorded: " + "; ".join(gone)


def test_the_hidden_commands_stay_hidden_and_the_lab_is_one_command():
    before = json.loads(RECORD.read_text())
    now = surface()
    assert set(before["hidden"]) <= set(now["hidden"])
    listed = {name for name in now["cli"] if name and " " not in name} - set(now["hidden"])
    assert "lab" in listed and not listed & set(before["hidden"])
    assert {f"lab {name}" for name in before["hidden"]} <= set(now["cli"])
