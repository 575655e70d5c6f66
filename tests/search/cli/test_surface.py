"""Nothing users or other programs rely on goes away: every command, option and argument of
the CLI and every HTTP endpoint, query parameter and body key from before issue 25's
consolidation (tests/data/surface-before-issue-25.json) is still there."""

from __future__ import annotations

import json

from tests.conftest import ROOT
from tests.support.surface import surface


def test_every_command_option_endpoint_and_key_of_before_is_still_there():
    before = json.loads((ROOT / "tests" / "data" / "surface-before-issue-25.json").read_text())
    now = surface()
    gone = [
        f"{part} {name}: {sorted(set(keys) - set(now[part].get(name, [])))}"
        for part in ("cli", "http")
        for name, keys in before[part].items()
        if name not in now[part] or set(keys) - set(now[part][name])
    ]
    assert gone == [], "gone since issue 25: " + "; ".join(gone)
