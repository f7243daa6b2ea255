"""Operator controls: kill switches, the rollout gate, the circuit that closes a switch, and
dead letters (``activities.execute``, ``activities.circuit``, ``activities.dead_letters``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from contracts import StepRecord
from contracts.actions import ReplaySettle
from contracts.rollout import RolloutDecision


class SwitchBoard(Protocol):
    async def pass_switch(self, adapter: str, tenant_id: str, *,
                          row_seen: bool = False) -> str | None:
        """Let one action through: why not (a closed switch), or None."""
        ...


class RolloutGate(Protocol):
    async def decide_row(self, row: dict[str, Any] | None, event_id: str,
                         action_key: str) -> RolloutDecision: ...


#: The circuit's signal kinds -> the rule name the audit row and the switch's reason give.
RULES: Mapping[str, str] = {"unknown_write": "unknown_writes", "duplicate": "duplicates"}


@dataclass(frozen=True)


class CircuitCount:
    """The signals counted in the window, and whether this one closed the switch."""

    count: int
    tripped: bool


class CircuitCounter(Protocol):
    async def signal(self, *, adapter: str, tenant_id: str, kind: str, key: str, limit: int,
                     window: timedelta, policy_version: str | None) -> CircuitCount:
        """Record one signal of ``kind`` (a key of ``RULES``); a repeated key counts once."""
        ...


class DeadLetterQueue(Protocol):
    async def dead_letter(
        self, *, workflow_id: str, error_class: str, error_code: str, state: str, owner: str,
        replay_plan: str, redacted_payload: dict[str, Any] | None, tenant_id: str | None,
        event_id: str | None, correlation_id: str | None, action_key: str | None = None,
        replay_input: dict[str, Any] | None = None, step: StepRecord | None = None,
        replaces: ReplaySettle | None = None,
    ) -> None: ...

    async def record_replay_result(self, dl_id: int, *, actor: str | None, replay: int,
                                   result: str) -> bool: ...
