"""The incident packet (ADR 0046): stable refs, groups by code and by code x policy x prompt
version, totals that add up, a stable hash, and no personal data whatever the rows hold."""

from __future__ import annotations

import json

from policies.incident_packet import build_packet, packet_hash
from tests.policies.incident_rows import SINCE, UNTIL, rows


def packet():  # type: ignore[no-untyped-def]
    return build_packet(rows(), since=SINCE, until=UNTIL, tenant="acme")


def test_every_piece_of_evidence_has_its_stable_ref() -> None:
    refs = {i.ref for i in packet().items}

    assert {"dl:12", "uw:41", "uw:42", "cc:7", "ks:8", "q:reason:bad_signature", "fv:43v1",
            "rp:90", "sum:window"} <= refs


def test_failures_are_grouped_by_code_and_by_code_policy_and_prompt_version() -> None:
    items = {i.ref: i for i in packet().items}

    assert items["code:target_504"].figures["count"] == 2
    assert sorted(items["code:target_504"].refs) == ["uw:41", "uw:42"]
    # The same code under two policy versions: two version groups, one write each.
    assert items["ver:target_504|2026-12-02.1|care-reminder-v3"].refs == ["uw:41"]
    assert items["ver:target_504|2026-12-01|care-reminder-v3"].refs == ["uw:42"]
    assert items["code:bad_signature"].figures["count"] == 3  # three quarantined rows
    assert items["ver:schema_drift|-|-"].figures["count"] == 1  # failed before any draft


def test_totals_count_each_kind_and_recovery_time_is_kept() -> None:
    items = {i.ref: i for i in packet().items}

    assert items["sum:window"].figures == {
        "dead_letters": 1, "unknown_writes": 2, "unknown_writes_recovered": 1,
        "circuit_closures": 1, "kill_switch_changes": 1, "quarantined": 4,
        "failed_validations": 1, "replays": 1, "failures": 8}
    assert items["uw:41"].figures["recovery_seconds"] == 2.3
    assert items["uw:42"].facts["state"] == "UNRESOLVED"


def test_the_timeline_is_in_time_order() -> None:
    timeline = packet().timeline

    assert [t.ref for t in timeline][:3] == ["dl:12", "q:reason:bad_signature",
                                            "q:reason:_redacted_"]
    assert [t.at for t in timeline] == sorted(t.at for t in timeline)


def test_no_personal_data_enters_the_packet() -> None:
    """A reason code carrying a customer's e-mail address is dropped; operator names, which
    the audit rows hold, never reach the packet."""
    text = json.dumps(packet().model_dump(mode="json"))

    assert "lan.nguyen" not in text and "example.com" not in text and "@" not in text
    assert "op.kim" not in text
    assert "[redacted]" in text


def test_the_same_rows_give_the_same_hash_and_any_change_another() -> None:
    changed = rows()
    changed["quarantines"][0]["n"] = 4

    assert packet_hash(packet()) == packet_hash(packet())
    assert packet_hash(build_packet(changed, since=SINCE, until=UNTIL, tenant="acme")) != (
        packet_hash(packet()))
