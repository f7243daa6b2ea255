"""Contracts of the scheduled receipt sweep (pure)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field

from contracts.base import Frozen


class SweepRequest(Frozen):
    older_than: timedelta = timedelta(minutes=15)
    limit: int = Field(default=200, ge=1, le=5000)
    recheck_recent: int = Field(default=50, ge=0, le=5000)


class SweepReport(Frozen):
    """Action keys only: a report an operator can paste, with no customer data in it."""

    checked: int = 0
    settled_found_at_target: list[str] = Field(default_factory=list)
    still_open: list[str] = Field(default_factory=list)
    drift_missing_at_target: list[str] = Field(default_factory=list)
