"""Rows as ``IncidentStore.evidence`` returns them, for the pure packet and validator tests: a
window with a schema-drift dead letter, an unknown write recovered by lookup, a circuit
closure, an operator's kill and reopen, quarantines by two reasons (one reason carrying a
customer's e-mail address, as a broken producer might) and a refused draft."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

T0 = datetime(2026, 12, 2, 3, 0, 5, 123456, tzinfo=UTC)
SINCE, UNTIL = T0 - timedelta(hours=1), T0 + timedelta(hours=1)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def rows() -> dict[str, list[dict[str, Any]]]:
    return {
        "dead_letters": [
            {"id": 12, "at": at(0), "tenant_id": "acme", "workflow_id": "event/acme/k-drift",
             "error_class": "dead_letter", "error_code": "schema_drift",
             "state": "DEAD_LETTERED", "status": "OPEN", "replays": 0, "policy_version": None,
             "prompt_version": None}],
        "unknown_writes": [
            {"id": 41, "at": at(3), "tenant_id": "acme", "workflow_id": "event/acme/k-504",
             "adapter": "messaging", "error_code": "target_504", "outcome": "SUCCEEDED",
             "seconds": 2.345, "policy_version": "2026-12-02.1",
             "prompt_version": "care-reminder-v3"},
            {"id": 42, "at": at(4), "tenant_id": "acme", "workflow_id": "event/acme/k-504b",
             "adapter": "messaging", "error_code": "target_504", "outcome": None,
             "seconds": None, "policy_version": "2026-12-01",
             "prompt_version": "care-reminder-v3"}],
        "switch_changes": [
            {"id": 7, "at": at(9), "actor": "circuit", "action": "kill", "adapter": "messaging",
             "tenant_id": "acme", "rule": "unknown_writes", "count": 2, "limit": 2,
             "window_seconds": 900, "canary": None, "policy_version": "2026-12-02"},
            {"id": 8, "at": at(60), "actor": "op.kim", "action": "reopen_canary",
             "adapter": "messaging", "tenant_id": "acme", "rule": None, "count": None,
             "limit": None, "window_seconds": None, "canary": 1, "policy_version": None}],
        "quarantines": [
            {"reason_code": "bad_signature", "n": 3, "first_at": at(1), "last_at": at(5)},
            {"reason_code": "lan.nguyen@example.com", "n": 1, "first_at": at(2),
             "last_at": at(2)}],
        "failed_validations": [
            {"event_row": 43, "version": 1, "at": at(6), "tenant_id": "acme",
             "workflow_id": "event/acme/k-inj", "status": "failed_validation",
             "provider": "offline", "model": "offline-v1", "prompt_version": "care-reminder-v3",
             "policy_version": "2026-12-02", "code": "injection"}],
        "replays": [
            {"id": 90, "at": at(30), "action": "dlq_replay", "dead_letter_id": 12,
             "tenant_id": "acme", "replay": 1, "result": None}],
    }
