"""The policy matrix: the shipped release, the "*" fallback, and clear errors for bad files."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from policies.matrix import (
    VERSIONS_DIR,
    PolicyMatrixError,
    PolicySnapshot,
    load_matrix,
    newest_matrix_file,
)

# A released file is never edited: its version is stamped on decisions and receipts. Add a new
# file (and its hash here) instead; never change a hash that is already listed.
RELEASED = {
    "2026-11-30.json": "76b69ebf9eb7d9384ce55a99ac39b4adc3ac5d8162a0c0b0af7ce12fcf8e6478",
    "2026-12-01.json": "36f036033c1784249e08c7cbdae8c33420962ff9fb5627519a7554e49012b6e8",
    "2026-12-02.json": "a6b1efa40168b41a272f68a518958cb7316d1be078c6976b6e6ec5ca53a93cd8",
    "2026-12-02.2.json": "a310c5962b14091fdbd770d9ce76119214e267b3c1f12de995ee5fd62cacb0b4",
    "2026-12-02.3.json": "0b0d7c26124a3ce13ab0227fb5b34baf7a51372cbba16f01bc3ffe9debb787d0",
}

RULE: dict[str, Any] = {
    "approver_roles": ["care_lead", "reviewer"],
    "consent_required": True,
    "max_context_age": "P1D",
    "max_messages_per_customer_per_day": 1,
    "separation_of_duties": True,
    "review_sla": "PT4H",
    "review_deadline": "PT24H",
    "fallback_owner": "care-ops-oncall",
    "risk": "medium",
    "max_info_rounds": 2,
    "backlog_limit": 10,
    "adapter": "messaging",
    "action": "send_message",
}


def _write(directory: Path, name: str, body: Any) -> Path:
    path = directory / name
    path.write_text(body if isinstance(body, str) else json.dumps(body), encoding="utf-8")
    return path


def _matrix(**rules: dict[str, Any]) -> dict[str, Any]:
    return {"version": "2026-12-01.1", "rules": rules}


def test_released_files_are_never_edited() -> None:
    found = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in VERSIONS_DIR.glob("*")}
    assert found == RELEASED, "a released matrix changed or a new one is not pinned here"


def test_shipped_matrix_is_the_newest_and_covers_the_demo_tenants() -> None:
    matrix = load_matrix()
    assert newest_matrix_file() == VERSIONS_DIR / "2026-12-02.3.json"
    assert matrix.version == "2026-12-02.3"
    for tenant in ("acme", "globex", "some-new-tenant"):
        snapshot = matrix.rule_for(tenant, "CARE_DUE")
        assert snapshot is not None and snapshot.version == "2026-12-02.3"
        rule = snapshot.rule
        assert (rule.adapter, rule.action) == ("messaging", "send_message")
        assert rule.consent_required and rule.separation_of_duties
        assert rule.review_deadline == timedelta(hours=24)
        assert "reviewer" in rule.approver_roles


def test_the_first_release_still_loads_and_later_ones_spell_out_shape_fields_and_stops() -> None:
    first = load_matrix(VERSIONS_DIR / "2026-11-30.json").rule_for("acme", "CARE_DUE")
    assert first is not None and first.rule.output is None and first.rule.stop_flags is None
    for path in VERSIONS_DIR.glob("*.json"):
        if path.name < "2026-12-01":
            continue
        for tenant, rules in load_matrix(path).rules.items():
            for event_type, rule in rules.items():
                where = f"{path.name}: {tenant}.{event_type}"
                assert rule.output is not None, where
                assert rule.context_fields is not None, where
                assert rule.stop_flags is not None, where
                # Secrets never reach a reviewer's screen or a model, whatever else a rule says.
                assert {"secret_like", "secret_in_context"} <= set(rule.stop_flags), where
                # Contact data is fetched only for an action whose message may carry it.
                wants_contact = rule.output.customer_contact
                assert wants_contact or not {"crm.phone", "crm.email", "crm.address"} & set(
                    rule.context_fields), where


def test_the_order_confirmation_is_customer_facing_so_a_person_approves_it() -> None:
    """Issue 30 item 3: the notify consumer's ORDER_PLACED goes through review for every
    tenant, is sent only with consent, and its drafter reads no contact data or notes."""
    matrix = load_matrix()
    for tenant in ("acme", "globex", "some-new-tenant"):
        snapshot = matrix.rule_for(tenant, "ORDER_PLACED")
        assert snapshot is not None
        rule = snapshot.rule
        assert "order_desk" in rule.approver_roles and rule.separation_of_duties
        assert rule.consent_required and rule.triage is None
        assert rule.supersede is False  # a second order never cancels the first's confirmation
        assert (rule.adapter, rule.action) == ("messaging", "send_message")
        assert rule.context_fields is not None
        assert not {"crm.notes", "crm.phone", "crm.email"} & set(rule.context_fields)


def test_tenant_rule_wins_over_the_default() -> None:
    matrix = load_matrix()
    acme, default = matrix.rule_for("acme", "CARE_DUE"), matrix.rule_for("initech", "CARE_DUE")
    assert acme is not None and default is not None
    assert acme.rule.max_messages_per_customer_per_day == 2
    assert default.rule == matrix.rules["*"]["CARE_DUE"]
    assert default.rule.review_sla == timedelta(hours=4)


def test_default_applies_per_event_type_and_nothing_covers_unknown_types(tmp_path: Path) -> None:
    own = {**RULE, "risk": "low"}
    matrix = load_matrix(
        _write(tmp_path, "m.json", _matrix(acme={"ORDER_PAID": own}, **{"*": {"CARE_DUE": RULE}}))
    )
    care = matrix.rule_for("acme", "CARE_DUE")
    paid = matrix.rule_for("acme", "ORDER_PAID")
    assert care is not None and care.rule.risk == "medium"  # acme has no CARE_DUE rule: "*"
    assert paid is not None and paid.rule.risk == "low"
    assert matrix.rule_for("globex", "ORDER_PAID") is None  # no default for ORDER_PAID
    assert matrix.rule_for("acme", "TICKET_OPENED") is None


def test_snapshot_survives_a_json_round_trip_and_cannot_be_changed() -> None:
    # The workflow receives the snapshot through the pydantic data converter (JSON).
    snapshot = load_matrix().rule_for("globex", "CARE_DUE")
    assert snapshot is not None
    assert PolicySnapshot.model_validate_json(snapshot.model_dump_json()) == snapshot
    assert json.loads(snapshot.model_dump_json())["rule"]["review_sla"] == "PT2H"
    with pytest.raises(ValidationError):
        snapshot.rule.backlog_limit = 10_000  # type: ignore[misc]


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        ({"review_sla": None}, "rules.acme.CARE_DUE.review_sla", "Field required"),
        ({"review_sla": 14400}, "rules.acme.CARE_DUE.review_sla", "ISO-8601"),
        ({"max_context_age": "P1M"}, "rules.acme.CARE_DUE.max_context_age", "ISO-8601"),
        ({"review_sla": "PT0S"}, "rules.acme.CARE_DUE.review_sla", "longer than zero"),
        ({"risk": "critical"}, "rules.acme.CARE_DUE.risk", "'low', 'medium' or 'high'"),
        ({"consent_required": "yes"}, "rules.acme.CARE_DUE.consent_required", "boolean"),
        ({"approver_roles": []}, "rules.acme.CARE_DUE.approver_roles", "at least 1"),
        ({"consent_requried": True}, "rules.acme.CARE_DUE.consent_requried", "Extra inputs"),
        ({"review_deadline": "PT4H"}, "rules.acme.CARE_DUE", "longer than review_sla"),
        (
            {"max_messages_per_customer_per_day": 0},
            "max_messages_per_customer_per_day",
            "greater than or equal to 1",
        ),
    ],
)
def test_a_malformed_rule_is_refused_naming_the_file_and_field(
    tmp_path: Path, change: dict[str, Any], field: str, problem: str
) -> None:
    rule = {k: v for k, v in {**RULE, **change}.items() if v is not None}
    path = _write(tmp_path, "2026-12-01.json", _matrix(acme={"CARE_DUE": rule}))
    with pytest.raises(PolicyMatrixError) as caught:
        load_matrix(path)
    assert str(path) in caught.value.message
    assert field in caught.value.message and problem in caught.value.message
    assert not caught.value.retryable  # retrying cannot fix a file; an operator must


def test_broken_json_and_bad_keys_are_named(tmp_path: Path) -> None:
    with pytest.raises(PolicyMatrixError, match=r"broken\.json: \(file\): Invalid JSON"):
        load_matrix(_write(tmp_path, "broken.json", '{"version": "2026-12-01.1", "rules": {'))
    with pytest.raises(PolicyMatrixError, match=r"rules\.acme\.care_due\.\[key\]"):
        load_matrix(_write(tmp_path, "m.json", _matrix(acme={"care_due": RULE})))
    with pytest.raises(PolicyMatrixError, match=r"version: String should match"):
        load_matrix(_write(tmp_path, "v.json", {"version": "latest", "rules": {}}))
    with pytest.raises(PolicyMatrixError, match=r"missing\.json"):
        load_matrix(tmp_path / "missing.json")


def test_a_copied_release_with_an_unbumped_version_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "2026-12-02.json", _matrix(**{"*": {"CARE_DUE": RULE}}))
    with pytest.raises(PolicyMatrixError, match=r"version: '2026-12-01.1' does not match"):
        load_matrix(path)


def test_newest_release_is_chosen_by_version_not_by_plain_string_order(tmp_path: Path) -> None:
    for name in ("2026-11-30.json", "2026-12-01.json", "2026-12-01.2.json", "2026-12-01.10.json"):
        _write(tmp_path, name, "{}")
    assert newest_matrix_file(tmp_path).name == "2026-12-01.10.json"
    _write(tmp_path, "2026-12-02.json", "{}")
    assert newest_matrix_file(tmp_path).name == "2026-12-02.json"


def test_a_misnamed_or_missing_release_is_an_error_not_skipped(tmp_path: Path) -> None:
    with pytest.raises(PolicyMatrixError, match="no policy matrix file"):
        newest_matrix_file(tmp_path)
    _write(tmp_path, "2026-12-01.json", "{}")
    _write(tmp_path, "latest.json", "{}")
    with pytest.raises(PolicyMatrixError, match=r"latest\.json not named"):
        newest_matrix_file(tmp_path)
    (tmp_path / "latest.json").unlink()
    _write(tmp_path, "2026-12-01.1.json", "{}")
    with pytest.raises(PolicyMatrixError, match="two files name the same version"):
        newest_matrix_file(tmp_path)
