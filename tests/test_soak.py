"""A soak bounded in time (`tests.support.soak`), with a state machine that only draws
numbers: a fresh seed for every run, a budget that stops new examples but never the
shrinking of a failure, and the seed a failure names, which repeats it."""

from __future__ import annotations

import re
from typing import ClassVar

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from tests.support.soak import Soak

PROFILE = settings(
    max_examples=20, stateful_step_count=3, deadline=None, database=None, derandomize=True,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip


def numbers_machine(fails_in: str | None = None, over: int = 0) -> type[RuleBasedStateMachine]:
    """A machine whose examples draw three numbers, recorded in `examples`; asked to, it
    fails in its third step or in its teardown when a drawn number is over `over`."""

    class Numbers(RuleBasedStateMachine):
        examples: ClassVar[list[list[int]]] = []

        def __init__(self) -> None:
            super().__init__()
            self.drawn: list[int] = []
            self.examples.append(self.drawn)

        @rule(number=st.integers(0, 1000))
        def draw(self, number: int) -> None:
            self.drawn.append(number)
            assert not (fails_in == "steps" and len(self.drawn) == 3 and max(self.drawn) > over)

        def teardown(self) -> None:
            assert not (fails_in == "teardown" and max(self.drawn, default=0) > over)

    return Numbers


def test_without_a_budget_the_profile_runs_in_full_under_the_seed():
    first, second, other = numbers_machine(), numbers_machine(), numbers_machine()
    Soak(seed=1).run(first, PROFILE)
    Soak(seed=1).run(second, PROFILE)
    Soak(seed=2).run(other, PROFILE)
    assert len(first.examples) >= PROFILE.max_examples  # Hypothesis may run one twice
    drawn = [{tuple(example) for example in run.examples} for run in (first, second, other)]
    assert drawn[0] == drawn[1] != drawn[2]


def test_a_spent_budget_lets_one_example_run_and_no_more():
    machine = numbers_machine()
    Soak(seed=1, seconds=0).run(machine, PROFILE)
    assert len(machine.examples) == 1


def test_each_soak_from_the_environment_draws_a_fresh_seed_unless_one_is_given(monkeypatch):
    monkeypatch.setenv("CTXSEARCH_SOAK_SECONDS", "90")
    monkeypatch.delenv("CTXSEARCH_ORACLE_SEED", raising=False)
    soaks = {Soak.from_environment() for _ in range(5)}
    assert len(soaks) == 5 and {soak.seconds for soak in soaks} == {90.0}
    monkeypatch.setenv("CTXSEARCH_ORACLE_SEED", "7")  # a replay runs to its end
    assert Soak.from_environment() == Soak(seed=7, seconds=None)
    monkeypatch.delenv("CTXSEARCH_SOAK_SECONDS")
    monkeypatch.delenv("CTXSEARCH_ORACLE_SEED")
    assert Soak.from_environment().seconds is None


@pytest.mark.parametrize("fails_in", ["steps", "teardown"])
def test_a_failure_names_the_seed_that_repeats_it(fails_in):
    unshrunk = settings(PROFILE, max_examples=1000, phases=[Phase.generate])
    machine = numbers_machine(fails_in, over=500)
    with pytest.raises(AssertionError) as failure:
        Soak.from_environment().run(machine, unshrunk)
    first_failing = next(drawn for drawn in machine.examples if max(drawn) > 500)
    (seed,) = re.findall(r"CTXSEARCH_ORACLE_SEED=(\d+)", "\n".join(failure.value.__notes__))

    again = numbers_machine(fails_in, over=500)
    with pytest.raises(AssertionError):
        Soak(seed=int(seed)).run(again, unshrunk)
    assert next(drawn for drawn in again.examples if max(drawn) > 500) == first_failing


@pytest.mark.parametrize("fails_in", ["steps", "teardown"])
def test_a_failure_past_the_budget_is_shrunk_and_reported(fails_in):
    machine = numbers_machine(fails_in, over=-1)  # every example fails
    with pytest.raises(AssertionError):
        Soak(seed=1, seconds=0).run(machine, PROFILE)
    assert len(machine.examples) > 2  # the failing example, then the shrinker's
