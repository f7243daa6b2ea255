"""What a reviewer sees of the facts a draft cites and of the rule that routed it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from policies.evidence import cited_evidence, review_route
from policies.matrix import load_matrix

READ = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
CONTEXT = {"crm.first_name": "Lan", "crm.phone": "+84 912 345 678",
           "crm.email": "lan.nguyen@example.com", "crm.notes": "key sk-abcdefghijklmnopqrstu",
           "event.due_at": "2026-12-10"}


def evidence(refs: list[str], updated: datetime = READ - timedelta(hours=3)) -> dict:
    found = cited_evidence(refs, CONTEXT, fetched_at=READ, source_updated_at=updated,
                           max_age=timedelta(days=1), event_source="crm-scheduler")
    return {e.ref: e for e in found}


def test_names_are_shown_and_contact_data_is_masked() -> None:
    shown = evidence(["crm.first_name", "crm.phone", "crm.email", "crm.notes"])
    assert shown["crm.first_name"].value == "Lan" and not shown["crm.first_name"].masked
    assert shown["crm.phone"].value == "••• 678" and shown["crm.phone"].masked
    assert shown["crm.email"].value == "•••@example.com"
    assert "sk-abc" not in (shown["crm.notes"].value or "") and shown["crm.notes"].masked
    assert all("912 345" not in (e.value or "") and "lan.nguyen" not in (e.value or "")
               for e in shown.values())


def test_each_fact_names_its_origin_and_freshness() -> None:
    shown = evidence(["crm.first_name", "event.due_at", "crm.pet_name"])
    crm = shown["crm.first_name"]
    assert (crm.origin, crm.field, crm.fetched_at) == ("CRM customer record", "first_name", READ)
    assert crm.freshness == "fresh: updated 3h before it was read (the policy allows 1d)"
    assert shown["event.due_at"].origin == "event from crm-scheduler"
    assert shown["crm.pet_name"].value is None  # cited, but the context did not hold it
    stale = evidence(["crm.first_name"], READ - timedelta(days=2))["crm.first_name"]
    assert stale.freshness.startswith("stale: updated 2d before")


def test_the_route_says_who_approves_what_is_left_and_who_is_next() -> None:
    rule = load_matrix().rule_for("acme", "CARE_DUE").rule
    route = review_route(rule, reason_code=None, sends_today=1, info_rounds=1, escalated=False)
    assert route.approver_roles == list(rule.approver_roles)
    assert route.sends_left_today == rule.max_messages_per_customer_per_day - 1
    assert route.fallback_owner == rule.fallback_owner
    assert route.info_rounds_left == max(rule.max_info_rounds - 1, 0)
    assert route.consent.startswith("given" if rule.consent_required else "not required")
