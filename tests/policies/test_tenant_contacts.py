"""Issue 28 item 3: a tenant's own contact points never count as foreign in its drafts; any
other phone number or e-mail address still does (ADR 0039). Pure: no store, no Temporal."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from contracts import Draft, PolicyRule
from contracts.contacts import TenantContact, contact_key, phone_key, same_phone
from policies.draft_validator import inspect_draft, stopping, validate_draft
from policies.matrix import VERSIONS_DIR, load_matrix
from tests.policies.output_shape_support import request, rule

ACME = (TenantContact(kind="phone", value="+84 28 3822 1234"),
        TenantContact(kind="email", value="Care@Acme-Clinic.vn"),
        TenantContact(kind="domain", value="acme-clinic.vn"))


def findings(message: str, policy: PolicyRule | None, *own: TenantContact) -> list[str]:
    req = request(policy).model_copy(update={"tenant_contacts": own})
    return validate_draft(Draft(message=message, source_refs=["crm.first_name"]), req)


@pytest.mark.parametrize(("one", "other"), [
    ("+1 555 0100", "5550100"),
    ("+84 28 3822 1234", "028 3822 1234"),
    ("+84 28 3822 1234", "(028) 3822-1234"),
    ("0084 28 3822 1234", "+84 28 3822 1234"),
    ("+39 06 1234 5678", "06 1234 5678"),
])
def test_writings_of_one_number_share_a_key(one: str, other: str) -> None:
    assert phone_key(one) == phone_key(other) is not None


def test_numbers_that_differ_do_not_match() -> None:
    assert phone_key("+84 28 3822 1234") != phone_key("+84 28 3822 1235")
    # Another area code with the same local digits is another line.
    assert not same_phone(phone_key("+1 415 555 0100") or "", phone_key("+1 202 555 0100") or "")
    # A country code written without its "+" is still recognised as one.
    assert same_phone(phone_key("84 28 3822 1234") or "", phone_key("028 3822 1234") or "")
    assert not same_phone(phone_key("99 28 3822 1234") or "", phone_key("028 3822 1234") or "")


@pytest.mark.parametrize(("kind", "value"), [
    ("phone", "call 555 0100"), ("phone", "12345"), ("email", "care at acme"),
    ("domain", "localhost"), ("domain", "acme clinic.vn"),
])
def test_what_a_message_could_not_name_is_refused(kind: str, value: str) -> None:
    assert contact_key(kind, value) is None  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        TenantContact(kind=kind, value=value)  # type: ignore[arg-type]


def test_a_key_is_recomputed_never_taken_on_trust() -> None:
    forged = TenantContact.model_validate({"kind": "phone", "value": "+84 28 3822 1234",
                                           "key": "9999999"})
    assert forged.key == "2838221234"


def test_the_tenants_hotline_in_another_writing_is_not_foreign() -> None:
    # The released rule lists "+84 28 3822 1234"; the draft writes it the national way.
    shape = rule(phone_numbers=True, allowlist=["+84 28 3822 1234"])
    message = "Hi Lan, call us on 028 3822 1234 to book."

    assert findings(message, shape) == ["foreign_pii:phone"]
    assert findings(message, shape, *ACME) == []


def test_a_hotline_the_policy_does_not_list_passes_once_it_is_the_tenants_own() -> None:
    shape = rule(phone_numbers=True, email_addresses=True, links=True)
    message = ("Hi Lan, call +84 28 3822 1234, write to care@acme-clinic.vn or book at "
               "https://book.acme-clinic.vn/miu.")

    assert findings(message, shape) == ["link_not_allowed", "foreign_pii:email",
                                        "foreign_pii:phone"]
    assert findings(message, shape, *ACME) == []


def test_any_other_number_or_address_is_still_foreign() -> None:
    shape = rule(phone_numbers=True, email_addresses=True, links=True)
    message = ("Hi Lan, call +84 28 3822 1234 or my cell 0912 345 678, write to "
               "care@acme-clinic.vn or boss@acme-clinic.vn, book at https://acme-clinic.vn.evil.io")

    assert findings(message, shape, *ACME) == ["link_not_allowed", "foreign_pii:email",
                                               "foreign_pii:phone"]
    flags = inspect_draft(Draft(message=message),
                          request(shape).model_copy(update={"tenant_contacts": ACME}))
    assert {f.rule for f in flags if f.finding.startswith("foreign_pii")} == {
        "email_not_allowed", "phone_not_allowed"}


def test_a_shape_without_phone_numbers_shows_the_hotline_to_the_reviewer_without_stopping() -> None:
    released = load_matrix(VERSIONS_DIR / "2026-12-01.json").rule_for("default", "CARE_DUE")
    assert released is not None and not released.rule.output.phone_numbers  # type: ignore[union-attr]
    message = "Hi Lan, call us on (028) 3822-1234 to book."
    req = request(released.rule)

    assert stopping(inspect_draft(Draft(message=message), req), released.rule) == [
        "foreign_pii:phone"]
    flags = inspect_draft(Draft(message=message), req.model_copy(update={"tenant_contacts": ACME}))
    assert [(f.finding, f.rule) for f in flags] == [("tenant_contact:phone", "phone_not_in_shape")]
    assert stopping(flags, released.rule) == []


def test_the_customers_own_number_is_still_the_customers_even_if_the_tenant_lists_it() -> None:
    shape = rule(phone_numbers=True)
    own = TenantContact(kind="phone", value="0912 345 678")

    assert findings("Hi Lan, we will call 0912 345 678.", shape, own) == []
    req = request(shape, **{"crm.phone": "0912 345 678"})
    flags = inspect_draft(Draft(message="Hi Lan, we will call 0912 345 678."),
                          req.model_copy(update={"tenant_contacts": (own,)}))
    assert [f.finding for f in flags] == ["customer_contact:phone"]
