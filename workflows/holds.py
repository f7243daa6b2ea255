"""A run held by something outside it: the wait, the wake-up, what the hold shows.

``Hold`` counts ``wake`` signals (registered on ProcessEventWorkflow) and waits for the next one
or the fallback timer (workflows/budget.py). While held, the search attribute TollgateHeldBy
lists the wake-up keys that may release the run, so whatever releases it finds it by one
equality (``tollgate.ops.wake``). Deterministic like any workflow code.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts.actions import WakeUp
    from workflows.budget import WOKEN_HOLDS, budget_spent, fallback_delay
    from workflows.search_attributes import HELD_BY
    from workflows.shape import taken


class Hold:
    def __init__(self) -> None:
        self.wakes = 0
        #: Rounds waited so far in this event (carried across continue-as-new).
        self.rounds = 0
        self._shown: tuple[str, ...] = ()
        self._woken: bool | None = None

    def wake(self, signal: WakeUp) -> None:
        self.wakes += 1
        workflow.logger.info("woken: %s", signal.cause)

    def woken(self) -> bool:
        """Whether this run waits for wake-ups (``workflow.patched``, asked once per run)."""
        if self._woken is None:
            self._woken = taken(WOKEN_HOLDS)
        return self._woken

    async def wait(self, keys: list[str], legacy: timedelta, first: timedelta) -> bool:
        """One round of the hold; True when the history budget is spent and the run must
        continue as new. Older runs sleep ``legacy``, as they did."""
        if not self.woken():
            await workflow.sleep(legacy)
            return False
        self.show(keys)
        seen = self.wakes
        delay = fallback_delay(first, self.rounds)
        self.rounds += 1
        with contextlib.suppress(TimeoutError):  # the fallback: look again anyway
            await workflow.wait_condition(lambda: self.wakes > seen, timeout=delay)
        return budget_spent()

    def show(self, keys: list[str]) -> None:
        if tuple(keys) != self._shown:
            workflow.upsert_search_attributes([HELD_BY.value_set(keys)])
            self._shown = tuple(keys)

    def release(self) -> None:
        """The hold is over: the run drops off the wake-up lists."""
        # After continue-as-new the attribute came over from the run before: rounds tell.
        if self._shown or (self.rounds and self.woken()):
            workflow.upsert_search_attributes([HELD_BY.value_unset()])
            self._shown = ()
