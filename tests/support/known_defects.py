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

STILL_OPEN: frozenset[str] = frozenset(
    {
        "outside-links",  # issue 41 item 1: symlinks bring in files from outside the root
        "empty-allowed-list",  # issue 41 item 3: an empty allowed-list removes the filter
        "kept-row-text",  # issue 41 item 4: a kept passage row keeps its old text
        "data-keeps-text",  # issue 41 item 5: a file that turns into data keeps its old text
        "same-size-and-mtime",  # issue 41 item 6: same size, same mtime = unchanged
        "swapped-root",  # issue 41 item 8: a swapped symlinked root keeps the old release
        "cli-link-paths",  # issue 41 item 12: the CLI resolves symlinks the index keeps
        "read-paging",  # issue 41 item 13: MCP `read` paging loses text
        # found by the widened machine, in no issue yet:
        "watch-polling-loop",  # watch dies on a symlink loop once it polls the folders
    }
)
if "CTXSEARCH_ORACLE_STILL_OPEN" in os.environ:
    STILL_OPEN = frozenset(filter(None, os.environ["CTXSEARCH_ORACLE_STILL_OPEN"].split(",")))
