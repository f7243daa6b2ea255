"""Per-target capabilities come from configuration (TOLLGATE_TARGETS), not from the adapter."""

from __future__ import annotations

import httpx
import pytest

from adapters.http.messaging import MessagingHttpAdapter
from contracts import TargetCapabilities
from contracts.errors import InvalidInput, RetryableError, UnknownWrite
from tests.adapters.messaging_kit import action
from tollgate.config.targets import parse_targets


def test_declared_capabilities_reach_the_adapter() -> None:
    targets = parse_targets('{"messaging": {"lookup": false, "dedupe": false}}')

    adapter = MessagingHttpAdapter("http://messaging.test", capabilities=targets.get("messaging"))

    assert (adapter.supports_lookup, adapter.dedupes_by_key) == (False, False)


def test_a_declared_lookup_window_is_read_in_seconds() -> None:
    targets = parse_targets('{"messaging": {"lookup": true, "dedupe": false, '
                            '"lookup_window_s": 20}}')
    assert targets["messaging"].lookup_window_s == 20.0
    assert parse_targets('{"messaging": {"lookup": true, "dedupe": true}}')[
        "messaging"].lookup_window_s is None


def test_an_undeclared_target_keeps_its_default() -> None:
    assert parse_targets(None) == parse_targets("  ") == {}
    adapter = MessagingHttpAdapter("http://messaging.test", capabilities=None)
    assert (adapter.supports_lookup, adapter.dedupes_by_key) == (True, True)


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("{not json", "TOLLGATE_TARGETS is not valid JSON"),
        ('["messaging"]', "must be a JSON object"),
        ('{"messaging": {"lookup": true}}', "target 'messaging': dedupe: field required"),
        ('{"messaging": {"lookup": "yes", "dedupe": true}}', "lookup: input should be a valid"),
        ('{"messaging": {"lookup": true, "dedupe": true, "x": 1}}', "x: extra inputs"),
        ('{"messaging": {"lookup": true, "dedupe": false, "lookup_window_s": 0}}',
         "lookup_window_s: input should be greater than 0"),
        ('{"messaging": {"lookup": true, "dedupe": false, "lookup_window_s": "20"}}',
         "lookup_window_s: input should be a valid number"),
    ],
)
def test_a_bad_declaration_is_one_clear_line(raw: str, says: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_targets(raw)

    assert says in caught.value.message and "\n" not in caught.value.message


@pytest.mark.parametrize(("dedupe", "error"), [(True, RetryableError), (False, UnknownWrite)])
async def test_503_is_resent_only_to_a_target_declared_to_dedupe(
    dedupe: bool, error: type[Exception]
) -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(503)))
    adapter = MessagingHttpAdapter("http://messaging.test", client=client,
                                   capabilities=TargetCapabilities(lookup=True, dedupe=dedupe))
    try:
        with pytest.raises(error):
            await adapter.execute(action())
    finally:
        await client.aclose()

