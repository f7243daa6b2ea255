"""The authority matrix (policies/authority.py): who may close and reopen a kill switch, approve
a dead-letter replay, change a rollout mode, close a run's record, retry or drop an outbox row;
the runbook's fields a reopen needs; who may read which tenant's rows (ADR 0076)."""

from __future__ import annotations

import pytest

from contracts.identity import VerifiedIdentity
from policies.authority import OpsAction, OpsRead, authorize_ops, authorize_read

RUNBOOK = {"root_cause": "CRM timeout after a partial read", "fixture": "partial_write",
           "canary": 5}


def who(*roles: str, tenant: str = "acme", service: bool = False) -> VerifiedIdentity:
    return VerifiedIdentity(subject="s-1", reviewer="kim", roles=roles, tenant=tenant,
                            service=service)


@pytest.mark.parametrize(("action", "identity", "code"), [
    (OpsAction.KILL_SWITCH_CLOSE, who("incident_commander"), None),
    (OpsAction.KILL_SWITCH_CLOSE, who("circuit", service=True), None),
    (OpsAction.KILL_SWITCH_CLOSE, who("care_lead"), "role_not_allowed"),
    (OpsAction.KILL_SWITCH_REOPEN, who("incident_commander"), "role_not_allowed"),
    (OpsAction.KILL_SWITCH_REOPEN, who("change_owner", service=True), "service_account"),
    (OpsAction.KILL_SWITCH_REOPEN, who("change_owner", tenant="globex"), "cross_tenant"),
    (OpsAction.KILL_SWITCH_REOPEN, who("change_owner"), None),
    (OpsAction.DEAD_LETTER_APPROVE, who("on_call"), "role_not_allowed"),
    (OpsAction.DEAD_LETTER_APPROVE, who("change_owner"), None),
    (OpsAction.DEAD_LETTER_CLOSE, who("on_call"), "role_not_allowed"),
    (OpsAction.DEAD_LETTER_CLOSE, who("incident_commander"), None),
    (OpsAction.DEAD_LETTER_CLOSE, who("change_owner", tenant="globex"), "cross_tenant"),
    (OpsAction.ROLLOUT_CHANGE, who("incident_commander"), "role_not_allowed"),
    (OpsAction.ROLLOUT_CHANGE, who("change_owner", tenant="*"), None),
    (OpsAction.INCIDENT_REVIEW, who("on_call"), "role_not_allowed"),
    (OpsAction.INCIDENT_REVIEW, who("incident_commander", service=True), "service_account"),
    (OpsAction.INCIDENT_REVIEW, who("incident_commander"), None),
    (OpsAction.RUN_CLOSE, who("on_call"), None),
    (OpsAction.RUN_CLOSE, who("care_lead"), "role_not_allowed"),
    (OpsAction.RUN_CLOSE, who("circuit", service=True), "service_account"),
    (OpsAction.RUN_CLOSE, who("on_call", tenant="globex"), "cross_tenant"),
    (OpsAction.OUTBOX_RETRY, who("on_call"), None),
    (OpsAction.OUTBOX_DROP, who("on_call"), "role_not_allowed"),
    (OpsAction.OUTBOX_DROP, who("incident_commander"), None),
])
def test_the_matrix(action: OpsAction, identity: VerifiedIdentity, code: str | None) -> None:
    verdict = authorize_ops(action, identity, tenant="acme", runbook=RUNBOOK)
    assert (verdict.ok, verdict.reason_code) == (code is None, code)


def test_a_reopen_without_the_runbooks_fields_is_refused_naming_them() -> None:
    verdict = authorize_ops(OpsAction.KILL_SWITCH_REOPEN, who("change_owner"), tenant="acme",
                            runbook={"root_cause": "CRM timeout"})
    assert (verdict.ok, verdict.reason_code) == (False, "runbook_incomplete")
    assert "fixture, canary" in verdict.message


def test_a_reopen_without_a_canary_says_what_confirms_one_and_what_a_running_one_has_left(
) -> None:
    fields = {"root_cause": "CRM timeout", "fixture": "partial_write"}
    owner = who("change_owner")
    verdict = authorize_ops(OpsAction.KILL_SWITCH_REOPEN, owner, tenant="acme", runbook=fields)
    assert "fields: canary (--canary N lets N actions through; a reopen without it confirms a" \
        " canary that passed" in verdict.message, verdict.message
    assert "left" not in verdict.message, verdict.message
    running = authorize_ops(OpsAction.KILL_SWITCH_REOPEN, owner, tenant="acme",
                            runbook={**fields, "canary": None, "canary_left": 4})
    assert (running.ok, running.reason_code) == (False, "runbook_incomplete")
    assert running.message.endswith("this switch's canary has 4 action(s) left)"), \
        running.message


@pytest.mark.parametrize(("identity", "tenant", "ok"), [
    (who("care_lead"), "acme", True),  # no operator role: any verified identity reads its own
    (who("circuit", service=True), "acme", True),
    (who("change_owner"), "globex", False),
    (who("change_owner"), "*", False),  # a row of every tenant, or of none
    (who("care_lead", tenant="*"), "globex", True),  # an identity of every tenant reads any
    (who("care_lead", tenant="*"), "*", True),
])
def test_a_read_is_of_the_identitys_own_tenant_whatever_its_roles(
        identity: VerifiedIdentity, tenant: str, ok: bool) -> None:
    """ADR 0076: no role is needed to read; the tenant is, and a refusal names the token's
    tenant, never the row's."""
    verdict = authorize_read(OpsRead.DEAD_LETTER_READ, identity, tenant=tenant)
    assert (verdict.ok, verdict.reason_code) == (ok, None if ok else "cross_tenant")
    if not ok:
        assert verdict.message == ("the token may dead_letter_read for its own tenant ('acme')"
                                   " only")
