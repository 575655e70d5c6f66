"""The guard: generated sequences of changes and interruptions, after which an index brought
up to date must equal a fresh index of the same folders (`tests.support.oracle_machine`).

Profiles (Hypothesis settings, no example database):
- fast, in the default suite: a few examples of a few steps each, with the tiny BERT,
  seeded (`derandomize`);
- soak (`-m soak`): many more, under a seed drawn afresh for every run and named by a
  failure (`tests.support.soak`); `make test` runs them bounded in time beside the
  default suite, `make soak` runs their examples in full.
`CTXSEARCH_ORACLE_SEED=N` runs another sequence of examples (random, seeded with N): a
failed soak's again; `CTXSEARCH_ORACLE_EXAMPLES=N` changes how many. `STILL_OPEN`
(`tests.support.known_defects`) lists the known defects whose rules the machine leaves
out; each has a test here that must find it (strict xfail) until its fix lands, when it
leaves the list and its rules join the machine.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.stateful import run_state_machine_as_test

from indexer import Indexer
from tests.support.known_defects import STILL_OPEN
from tests.support.oracle import (
    Hit,
    Replay,
    assert_same_hits,
    assert_same_index,
    build_fresh_index,
    differences,
    hit_differences,
    index_fingerprint,
)
from tests.support.oracle_machine import KNOWN_DEFECTS, PRECISION, Setup, machine_for
from tests.support.oracle_tree import new_text
from tests.support.soak import Soak

POSTGRES_ONLY = frozenset({"pg-public"})
# How each known defect's test runs the machine: only the rules that lead to it (others
# would only spend its budget), and where given the instants its runs are signalled at,
# the folders and names of new files, `remove` of symlinks only.
_CHANGES = ("write_file", "edit_file", "delete_file", "index_root", "check_everything")
_NOT_UTF8 = os.fsdecode(b"caf\xe9")
FOCUS: dict[str, dict] = {
    "pg-public": {"focus": _CHANGES},
    # replace_index's own writes (through the writer, before and after) show the defect
    "replaced-index": {"focus": (*_CHANGES, "replace_index", "upsert_record")},
    "interrupt-after-commit": {
        "focus": (*_CHANGES, "interrupted_run"),
        # two steps past the last point before the commit: the commit has just returned
        "interruptions": ({"signal": "SIGINT", "point": "before-publish", "after": 2},),
    },
    "odd-index-path": {"focus": _CHANGES},
    "nested-roots": {
        "focus": (*_CHANGES, "move_folder", "index_nested_then_parent"),
        "folders": ("w/sub", "w/sub/deep"),
    },
    "watch-recreated": {
        "focus": ("write_file", "index_root", "watch"),
        "watched_changes": ("recreate root", "write"),
    },
    "watch-non-utf8": {"focus": ("index_root", "watch"), "names": (_NOT_UTF8,)},
    # files indexed, then renamed; new ones of kinds another reader reads otherwise (a
    # `.txt` renamed reads the same), and no edits or deletes to spend the budget on
    "move-reader": {
        "focus": ("write_file", "index_root", "change_extension", "check_everything"),
        "kinds": (".html", ".md"),
    },
    "remove-link": {"focus": ("make_symlink", "index_root", "remove"), "remove_links": True},
    "where-float": {"focus": ("write_file", "upsert_record", "delete_records")},
    "first-run-killed": {
        "focus": ("write_file", "interrupted_run"),
        "interruptions": ({"signal": "SIGKILL", "point": "mid-space-save", "count": 2},),
    },
    # loops made, then a watch that writes files whose names are not UTF-8 (it polls)
    "watch-polling-loop": {
        "focus": ("make_symlink", "index_root", "watch"),
        "names": (_NOT_UTF8,),
        "watched_changes": ("write",),
    },
    # links out of the root, made, swapped, indexed
    "outside-links": {"focus": ("link_outside", "make_symlink", "swap_link", "index_root")},
    # the tree's Markdown files of several passages, indexed, then cut to one of them
    "kept-row-text": {"focus": ("index_root", "cut_to_a_passage")},
    "data-keeps-text": {"focus": ("write_file", "index_root", "turn_into_data", "data_to_prose")},
    # the tree's first files replaced, or a link swapped to a twin of its target
    "same-size-and-mtime": {
        "focus": ("index_root", "replace_keeping_stat", "make_symlink", "swap_link")
    },
    # the root that is a symlink swapped between runs, and under a watch
    "swapped-root": {
        "focus": ("index_root", "swap_root", "watch", "check_everything"),
        "watched_changes": ("swap root", "write"),
    },
}

LOCAL_ONLY = frozenset({"odd-index-path"})
_SEED = os.environ.get("CTXSEARCH_ORACLE_SEED")


def profile(examples: int, steps: int, shrink: bool = True) -> settings:
    """Seeded settings for the machine (its variables in docs/configuration.md may change them)."""
    examples = int(os.environ.get("CTXSEARCH_ORACLE_EXAMPLES", examples))
    steps = int(os.environ.get("CTXSEARCH_ORACLE_STEPS", steps))
    shrink = shrink and os.environ.get("CTXSEARCH_ORACLE_SHRINK", "1") != "0"
    phases = tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate)
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        derandomize=_SEED is None,
        database=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
        verbosity=Verbosity.verbose
        if os.environ.get("CTXSEARCH_ORACLE_VERBOSE")
        else Verbosity.normal,
    )


FAST = profile(examples=4, steps=8)
SOAK = profile(examples=25, steps=20)
# A known defect's test stops at the first failure (it is expected): no shrinking.
DEFECT = profile(examples=12, steps=10, shrink=False)


def run_machine(setup: Setup, chosen: settings, soak: Soak | None = None) -> None:
    """Run the machine for `setup` under the chosen settings (and $CTXSEARCH_ORACLE_SEED),
    or as the given soak."""
    from hypothesis import seed

    machine = machine_for(setup)
    try:
        if soak is not None:
            soak.run(machine, chosen)
        else:
            seeded = machine if _SEED is None else seed(int(_SEED))(machine)
            run_state_machine_as_test(seeded, settings=chosen)
    except BaseException as error:
        error.add_note(f"(the machine failed in its example {machine.examples})")
        raise


def fixed_everywhere(backend: str) -> frozenset[str]:
    """The defect groups the machine runs: every one that is fixed, on this backend."""
    skipped = LOCAL_ONLY if backend == "postgres" else POSTGRES_ONLY
    return frozenset(KNOWN_DEFECTS) - STILL_OPEN - skipped


@pytest.fixture
def local_setup(tiny_model_dir, tmp_path) -> Setup:
    return Setup(tiny_model_dir, tmp_path, enabled=fixed_everywhere("local"))


@pytest.fixture
def postgres_setup(tiny_model_dir, tmp_path, postgres_server) -> Setup:
    return Setup(tiny_model_dir, tmp_path, postgres_server, enabled=fixed_everywhere("postgres"))


def test_the_machine_on_a_folder_index(local_setup):
    run_machine(local_setup, FAST)


def test_the_machine_on_postgresql_with_two_indexes_in_one_database(postgres_setup):
    run_machine(replace(postgres_setup, processes=0), FAST)


@pytest.mark.soak
def test_the_machine_on_a_folder_index_for_minutes(local_setup):
    run_machine(replace(local_setup, processes=2), SOAK, Soak.from_environment())


@pytest.mark.soak
def test_the_machine_on_postgresql_for_minutes(postgres_setup):
    soak = Soak.from_environment()
    run_machine(replace(postgres_setup, processes=1), profile(examples=12, steps=15), soak)


# Fixed defects the generic machine seldom leads to: their focused machines (`FOCUS`) run
# in the default suite as well, and must pass. A kept row's old text needs a file of
# several passages cut to its last stored one under its section's title as a plain line
# (`cut_to_a_passage`), one rule of 27 in the generic machine.
GUARDED = ("kept-row-text",)


@pytest.mark.parametrize("defect", GUARDED)
def test_the_machine_holds_a_fix_it_seldom_meets(defect, local_setup):
    knobs = dict(FOCUS[defect], focus=frozenset(FOCUS[defect]["focus"]))
    run_machine(replace(local_setup, **knobs), FAST)


@pytest.mark.soak  # a minute or more each, while they last
@pytest.mark.parametrize(
    "defect",
    [
        pytest.param(
            name,
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_DEFECTS[name])]
            + ([pytest.mark.postgres] if name in POSTGRES_ONLY else []),
        )
        for name in sorted(STILL_OPEN & KNOWN_DEFECTS.keys())
    ],
)
def test_the_machine_finds_a_known_defect(defect, tiny_model_dir, tmp_path, request):
    """Each known defect's rules on top of the fixed machine's: it must fail (an xfail
    that passes, strictly, is a failure: the fix landed, or the machine no longer finds
    the defect)."""
    backend = "postgres" if defect in POSTGRES_ONLY else "local"
    url = request.getfixturevalue("postgres_server") if backend == "postgres" else None
    enabled = fixed_everywhere(backend) | {defect}
    knobs = dict(FOCUS[defect], focus=frozenset(FOCUS[defect]["focus"]))
    setup = Setup(tiny_model_dir, tmp_path, url, enabled=enabled, processes=2, **knobs)
    run_machine(setup, DEFECT)


# -- the oracle itself -------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path):
    folder = tmp_path / "tree"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text(new_text(".md", 1, 150))
    (folder / "sub" / "b.txt").write_text(new_text(".txt", 2))
    (folder / "sub" / "c.html").write_text(new_text(".html", 3))
    return folder


def test_two_fresh_indexes_of_the_same_tree_are_the_same(tree, tmp_path, tiny_model_dir):
    replay = Replay({tree: ()}, {"r1": ("a record about a river bank", {"year": 2023})})
    first = build_fresh_index(tmp_path / "one", replay, str(tiny_model_dir), PRECISION)
    second = build_fresh_index(tmp_path / "two", replay, str(tiny_model_dir), PRECISION)
    assert_same_index(index_fingerprint(first), index_fingerprint(second))
    assert_same_hits(first, second)


def test_the_oracle_sees_a_changed_chunk_a_lost_vector_and_another_pooling(
    tree, tmp_path, tiny_model_dir
):
    replay = Replay({tree: ()})
    model = str(tiny_model_dir)
    expected = index_fingerprint(build_fresh_index(tmp_path / "good", replay, model, PRECISION))
    damaged = build_fresh_index(tmp_path / "bad", replay, model, PRECISION)
    with sqlite3.connect(damaged / "ctxsearch.sqlite") as connection:
        connection.execute("UPDATE chunks SET text = 'tampered' WHERE ordinal = 0 AND id = 1")
    found = differences(index_fingerprint(damaged), expected)
    assert any("tampered" in line for line in found)
    cls = build_fresh_index(tmp_path / "cls", Replay({tree: ()}, pooling="cls"), model, PRECISION)
    found = differences(index_fingerprint(cls), expected)
    assert found and all("cosine" in line and "pooling cls" in line for line in found)
    fewer = tmp_path / "fewer"
    build_fresh_index(fewer, replay, model, PRECISION)
    (tree / "sub" / "b.txt").unlink()
    Indexer(fewer, model=model, precision=PRECISION).index_folder(tree)
    found = differences(index_fingerprint(fewer), expected)
    assert found == [f"missing document {tree / 'sub' / 'b.txt'}"]


def test_the_oracle_compares_hits_whose_scores_are_a_hair_apart_without_failing_itself():
    # Within the tolerance, 0.50, 0.5004, 0.5008 chain into one tie group in one list and
    # two in the other; only the places where both lists drop clearly are compared.
    def hits(*scored: tuple[str, float]) -> list[Hit]:
        return [Hit(path, 0, 1, score) for path, score in scored]

    mine = hits(("a", 0.9), ("b", 0.5008), ("c", 0.5004), ("d", 0.5), ("e", 0.1))
    theirs = hits(("a", 0.9), ("b", 0.5009), ("c", 0.5003), ("d", 0.4998), ("e", 0.1))
    assert hit_differences(mine, theirs, tolerance=0.0005) == []
    other = hits(("a", 0.9), ("x", 0.5009), ("c", 0.5003), ("d", 0.4998), ("e", 0.1))
    assert hit_differences(mine, other, tolerance=0.0005) == [
        "hits [('b', 0, 1), ('c', 0, 1), ('d', 0, 1)] != [('c', 0, 1), ('d', 0, 1), ('x', 0, 1)]"
    ]
