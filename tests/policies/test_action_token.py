"""The action token covers exactly the approved send: its action key and the fingerprint of the
approved content, target and recipient, until it expires, under the deployment's key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from policies.action_token import TokenClaims, approval_fingerprint, check, mint

KEY = b"k" * 32
NOW = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
APPROVED = {"body": "Hi Ana, your care visit is due.", "policy_version": "care-v3",
            "action": "send_message", "adapter": "messaging", "channel": "sms",
            "recipient": "C-1001"}
FP = approval_fingerprint(**APPROVED)


def token(**over: object) -> str:
    args: dict[str, object] = {"token_id": "t-1", "action_key": "ak-1", "fingerprint": FP,
                               "key": KEY, "now": NOW, "ttl": timedelta(minutes=15), **over}
    return mint(**args)  # type: ignore[arg-type]


def test_the_approved_send_is_covered_until_expiry() -> None:
    got = check(token(), key=KEY, action_key="ak-1", fingerprint=FP, now=NOW)
    assert got == TokenClaims("t-1", "ak-1", FP, int((NOW + timedelta(minutes=15)).timestamp()))
    assert check(token(), key=KEY, action_key="ak-1", fingerprint=FP,
                 now=NOW + timedelta(minutes=15)) == "token_expired"


@pytest.mark.parametrize("field", sorted(APPROVED))
def test_any_change_to_what_was_approved_is_refused(field: str) -> None:
    changed = approval_fingerprint(**{**APPROVED, field: APPROVED[field] + "x"})
    assert check(token(), key=KEY, action_key="ak-1", fingerprint=changed,
                 now=NOW) == "token_content_changed"


def test_another_action_a_forged_and_a_missing_token_are_refused() -> None:
    assert check(token(), key=KEY, action_key="ak-2", fingerprint=FP,
                 now=NOW) == "token_wrong_action"
    assert check(token(key=b"x" * 32), key=KEY, action_key="ak-1", fingerprint=FP,
                 now=NOW) == "token_bad_signature"
    sig = token().partition(".")[2]
    longer = token(ttl=timedelta(days=30)).partition(".")[0]
    assert check(f"{longer}.{sig}", key=KEY, action_key="ak-1", fingerprint=FP,
                 now=NOW) == "token_bad_signature"
    assert check("not a token", key=KEY, action_key="ak-1", fingerprint=FP,
                 now=NOW) == "token_malformed"
    assert check(None, key=KEY, action_key="ak-1", fingerprint=FP, now=NOW) == "token_missing"
