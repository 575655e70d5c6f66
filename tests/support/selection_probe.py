"""A pytest plugin (`-p tests.support.selection_probe`) that writes, for every test a run
selected, its node id, fixture closure, parameters and marker names, as JSON lines to the
file named by $SELECTION_PROBE_OUT: what tests/test_markers.py checks the selections with."""

from __future__ import annotations

import json
import os


def pytest_collection_finish(session):
    with open(os.environ["SELECTION_PROBE_OUT"], "w") as out:
        for item in session.items:
            callspec = getattr(item, "callspec", None)
            params = {k: str(v) for k, v in callspec.params.items()} if callspec else {}
            row = {
                "id": item.nodeid,
                "fixtures": list(item.fixturenames),
                "params": params,
                "markers": sorted({marker.name for marker in item.iter_markers()}),
            }
            out.write(json.dumps(row) + "\n")
