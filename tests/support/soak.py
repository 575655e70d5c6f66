"""A soak bounded in time: one Hypothesis run of a state machine under a seed drawn afresh
for every run, that starts no new example once its budget of seconds is spent; a failure
names its seed.

Every run explores sequences the runs before it did not try, so coverage accumulates
across runs. `$CTXSEARCH_SOAK_SECONDS` is each soak test's budget (`make test` sets one;
unset, the profile's examples all run, as in `make soak`). `$CTXSEARCH_ORACLE_SEED=N`
runs seed N again without a budget: the run that failed, up to its failure, since the
examples before a failure are never cut short.
"""

from __future__ import annotations

import secrets
import sys
import time
from dataclasses import dataclass

from hypothesis import seed as with_seed
from hypothesis import settings
from hypothesis.errors import UnsatisfiedAssumption
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from indexer import config


@dataclass(frozen=True)
class Soak:
    """A soak's seed and budget (`seconds`; None: the profile's examples all run)."""

    seed: int
    seconds: float | None = None

    @classmethod
    def from_environment(cls) -> Soak:
        """The soak $CTXSEARCH_ORACLE_SEED (a replay, unbounded) or else
        $CTXSEARCH_SOAK_SECONDS (with a fresh seed) asks for."""
        seed = config.read(config.ORACLE_SEED)
        if seed:
            return cls(int(seed))
        seconds = config.read(config.SOAK_SECONDS)
        return cls(secrets.randbits(32), float(seconds) if seconds else None)

    def run(self, machine: type[RuleBasedStateMachine], profile: settings) -> None:
        """Run `machine` under `profile` (its examples, steps, shrinking), seeded, until
        the profile's examples have run or the budget is spent."""
        deadline = None if self.seconds is None else time.monotonic() + self.seconds
        bounded = with_seed(self.seed)(_bounded(machine, deadline))
        try:
            run_state_machine_as_test(
                bounded, settings=settings(profile, derandomize=False, database=None)
            )
        except _BudgetSpent:
            return
        except BaseException as error:
            error.add_note(
                f"the soak failed under seed {self.seed}: "
                f"CTXSEARCH_ORACLE_SEED={self.seed} runs it again"
            )
            raise


class _BudgetSpent(KeyboardInterrupt):
    """Ends a soak's run as a Ctrl-C would: Hypothesis stops at once, records nothing of
    the example it was starting, and lets it through."""


def _failing(error: BaseException | None) -> bool:
    """Whether an exception is a failure of the machine (not a rejected example, and not
    Hypothesis stopping an example, which is a BaseException)."""
    return isinstance(error, Exception) and not isinstance(error, UnsatisfiedAssumption)


def _bounded(
    machine: type[RuleBasedStateMachine], deadline: float | None
) -> type[RuleBasedStateMachine]:
    """`machine`, ending the run at its first new example past the deadline (once one has
    run), unless a failure was seen: a failing example is still shrunk."""
    seen = {"ran": 0, "failed": False}

    def spent() -> bool:
        past = deadline is not None and time.monotonic() > deadline
        return past and seen["ran"] > 0 and not seen["failed"]

    class Bounded(machine):  # type: ignore[valid-type, misc]
        def __init__(self) -> None:
            if spent():
                raise _BudgetSpent
            seen["ran"] += 1
            try:
                super().__init__()
            except BaseException as error:
                seen["failed"] = seen["failed"] or _failing(error)
                raise

        def teardown(self) -> None:
            # called in a `finally`: the exception on its way out, if any, is the step's
            seen["failed"] = seen["failed"] or _failing(sys.exc_info()[1])
            try:
                super().teardown()
            except BaseException as error:
                seen["failed"] = seen["failed"] or _failing(error)
                raise

    Bounded.__name__ = Bounded.__qualname__ = machine.__name__
    return Bounded
