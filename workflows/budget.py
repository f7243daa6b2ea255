"""How much history one run may write, and how a held run waits (deterministic).

Temporal warns at 10,240 events (or 10 MiB) in one run's history and terminates the run at
51,200 events (or 50 MiB). A run here never comes near: past ``HISTORY_BUDGET_EVENTS`` or
``HISTORY_BUDGET_BYTES``, or when the server suggests it, a held run continues as new, carrying
its state (``contracts.carry.RunCarry``). A normal event writes about 60 events; a round of a
hold (one timer, one send attempt or gate count, their workflow tasks) about 10.

A hold waits for the ``wake`` signal of whatever releases it (``tollgate.ops.wake``), and on a
slow fallback timer in case the signal is lost: ``first`` doubling each round up to
``HOLD_FALLBACK_CAP``. A week-long hold is then about 170 rounds, about 1,700 events.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

#: A tenth of Temporal's warning figure: replaying a whole history on a cold worker stays cheap,
#: and a week-long hold continues as new once or twice.
HISTORY_BUDGET_EVENTS = 1_000
#: Far below Temporal's 10 MiB warning; drafts and payloads are references and small texts.
HISTORY_BUDGET_BYTES = 1024 * 1024
#: The fallback timer never waits longer than this: a lost wake-up delays a send at most 1 h.
HOLD_FALLBACK_CAP = timedelta(hours=1)

#: workflow.patched() id: holds wait for ``wake`` (or the fallback timer) instead of a fixed
#: re-check, show what holds them in TollgateHeldBy, and continue as new past the budget.
WOKEN_HOLDS = "woken-holds"


def budget_spent() -> bool:
    info = workflow.info()
    return (info.is_continue_as_new_suggested()
            or info.get_current_history_length() >= HISTORY_BUDGET_EVENTS
            or info.get_current_history_size() >= HISTORY_BUDGET_BYTES)


def fallback_delay(first: timedelta, rounds: int) -> timedelta:
    """The fallback timer of hold round ``rounds`` (0 first): doubling, capped."""
    return min(first * (2 ** min(rounds, 20)), HOLD_FALLBACK_CAP)
