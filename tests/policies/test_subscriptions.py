"""The versioned subscription file: ORDER_PLACED goes to three consumers, each with its own
retry policy; a broken file is refused with one line naming the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.errors import InvalidInput
from policies.subscriptions import (
    consumers_for,
    control_core_key,
    load_subscriptions,
    newest_subscriptions_file,
)


def test_order_placed_has_three_consumers_with_their_own_policies() -> None:
    subs = load_subscriptions()
    assert subs.version == newest_subscriptions_file().stem
    found = consumers_for(subs, "ORDER_PLACED")
    assert [s.consumer for s in found] == ["inventory", "notify", "analytics"]
    assert len({(s.max_attempts, s.initial_interval_s) for s in found}) == 3
    assert consumers_for(subs, "CARE_DUE") == []


def test_only_the_customer_facing_consumer_acts_through_the_control_core() -> None:
    found = {s.consumer: s.through for s in load_subscriptions().subscriptions}
    assert found == {"inventory": "consumer", "notify": "control_core", "analytics": "consumer"}


def test_the_control_core_key_is_the_event_and_the_consumer() -> None:
    assert control_core_key("order-1001", "notify") == "order-1001.notify"
    # Two ids of 128 characters that differ only at the end stay two keys, each a valid id.
    a, b = "e" * 127 + "a", "e" * 127 + "b"
    keys = {control_core_key(a, "notify"), control_core_key(b, "notify")}
    assert len(keys) == 2 and all(len(k) <= 128 and k.endswith(".notify") for k in keys)


@pytest.mark.parametrize(("body", "problem"), [
    ("{", "JSONDecodeError"),
    ('{"version": "x", "subscriptions": [{"consumer": "a b", "event_types": ["ORDER_PLACED"]}]}',
     "subscriptions.0.consumer"),
    ('{"version": "other", "subscriptions": []}', "says version other"),
    ('{"version": "x", "subscriptions": [{"consumer": "a", "event_types": ["ORDER_PLACED"]},'
     ' {"consumer": "a", "event_types": ["ORDER_PLACED"]}]}', "listed twice"),
])
def test_a_broken_file_is_refused_in_one_line(tmp_path: Path, body: str, problem: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(body)
    with pytest.raises(InvalidInput) as caught:
        load_subscriptions(path)
    assert problem in str(caught.value) and "\n" not in str(caught.value)
