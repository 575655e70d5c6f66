"""The known defects whose fixes have not merged yet, one name each: the switches of the
guards (the oracle machine, `tests.support.oracle_machine.KNOWN_DEFECTS`; the read-surface
differential, `tests/search/test_read_surfaces.py`).

A guard leaves out the rules and checks of a defect listed here, and runs instead a test
that must find it (a strict xfail: it fails once the fix lands, or once the guard no
longer finds the defect). When a fix merges, remove its name: its rules and checks join
the guard, and its xfail test goes. `$CTXSEARCH_ORACLE_STILL_OPEN` (names, comma-
separated) replaces the list: to check that a guard finds a defect again on a commit that
reverts its fix.
"""

from __future__ import annotations

import os

STILL_OPEN: frozenset[str] = frozenset()
if "CTXSEARCH_ORACLE_STILL_OPEN" in os.environ:
    STILL_OPEN = frozenset(filter(None, os.environ["CTXSEARCH_ORACLE_STILL_OPEN"].split(",")))
