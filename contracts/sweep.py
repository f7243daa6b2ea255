"""Contracts of the scheduled receipt sweep (pure)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field

from contracts.base import EventState, Frozen


class SweepRequest(Frozen):
    older_than: timedelta = timedelta(minutes=15)
    limit: int = Field(default=200, ge=1, le=5000)
    recheck_recent: int = Field(default=50, ge=0, le=5000)


class SweptEnd(Frozen):
    """What a receipt the sweep settled brought with it (ADRs 0063, 0065): the event that
    followed it (its workflow id, ``from_state`` -> ``to_state``, reason code
    ``receipt_swept``), None when none did, and the write's dead letters the sweep closed."""

    action_key: str
    workflow_id: str | None = None
    from_state: EventState | None = None
    to_state: EventState | None = None
    dead_letters_closed: list[int] = Field(default_factory=list)


class SweepReport(Frozen):
    """Action keys and ids only: a report an operator can paste, with no customer data in it.
    ``followed``: what the settled receipts brought with them (``SweptEnd``), none for most."""

    checked: int = 0
    settled_found_at_target: list[str] = Field(default_factory=list)
    still_open: list[str] = Field(default_factory=list)
    drift_missing_at_target: list[str] = Field(default_factory=list)
    followed: list[SweptEnd] = Field(default_factory=list)
