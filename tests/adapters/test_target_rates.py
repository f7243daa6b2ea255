"""Per-target rate limits come from TOLLGATE_TARGET_RATES; unset or left out means no limit."""

from __future__ import annotations

import pytest

from contracts.errors import InvalidInput
from tollgate.config.targets import parse_rates


def test_rates_are_read_per_target_and_unset_means_none() -> None:
    assert parse_rates("messaging=5, crm=0.5") == {"messaging": 5.0, "crm": 0.5}
    assert parse_rates(None) == parse_rates(" ") == {}


@pytest.mark.parametrize("raw", ["messaging", "messaging=", "=5", "messaging=0",
                                 "messaging=-1", "messaging=fast", "messaging=nan",
                                 "messaging=inf"])
def test_a_bad_rate_is_one_clear_line_naming_the_entry(raw: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_rates(raw)
    assert caught.value.message.startswith(f"TOLLGATE_TARGET_RATES: {raw!r}")
