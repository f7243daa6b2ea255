"""What releases a held run, in an operator's words, from its wake-up key (the values of the
search attribute TollgateHeldBy, ``contracts.search_attributes``). ``tollgate ops status`` and
``tollgate trace`` say it beside each hold; the timer figures are the workflow's own."""

from __future__ import annotations

from workflows.budget import HOLD_FALLBACK_CAP
from workflows.timeouts import GATE_HOLD_RECHECK, KILL_SWITCH_RECHECK


def _fallback(first_s: float) -> str:
    first = f"{int(first_s // 60)} min" if first_s >= 60 else f"{int(first_s)} s"
    cap = int(HOLD_FALLBACK_CAP.total_seconds() // 3600)
    return f"its fallback timer ({first} doubling to {cap} h)"


def wakes(held_by: str, *, released: bool = False) -> str:
    """``released``: the switch that held the run is open again, and the run has not looked
    since (its wake-up was lost, or is on its way)."""
    kind, _, what = held_by.partition(":")
    if kind == "gate":
        return (f"a decided review of {what} (the backlog under the policy's limit), else "
                + _fallback(GATE_HOLD_RECHECK.total_seconds()))
    timer = _fallback(KILL_SWITCH_RECHECK.total_seconds())
    if released:
        return f"the switch is open again: its wake-up, else {timer}"
    adapter, _, tenant = what.partition("/")
    return f"tollgate ops reopen --adapter {adapter} --tenant '{tenant}', else {timer}"
