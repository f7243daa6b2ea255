"""The worker's pydantic payload converter is built once per process (ADR 0075): the SDK
constructs a data converter for every run and two for every activation, and each used to build
its own converters and its own empty cache of pydantic adapters. Sharing must not change what
any converter reads or writes, nor let one instance's change reach another."""

from __future__ import annotations

from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter, PydanticPayloadConverter
from temporalio.converter import (
    EncodingPayloadConverter,
    PayloadConverter,
    SerializationContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)

from contracts import ReviewDecision
from tollgate.codec.keyring import new_key_ring
from tollgate.codec.payload import SharedPydanticConverter, encrypted_data_converter

DECISION = ReviewDecision(request_id="r-1", decision="approve", reviewer="lan.nguyen",
                          role="care_lead", reason="call first", draft_version=1)
CONTEXT = WorkflowSerializationContext(namespace="default", workflow_id="event/acme/k-1")


def _json(converter: PayloadConverter) -> PydanticJSONPlainPayloadConverter:
    """The JSON converter inside a data converter's payload converter (which the SDK wraps)."""
    inner = getattr(converter, "_inner_payload_converter", converter)
    assert isinstance(inner, SharedPydanticConverter)
    (found,) = (c for c in inner.converters.values()
                if isinstance(c, PydanticJSONPlainPayloadConverter))
    return found


async def test_every_data_converter_reads_through_one_adapter_cache() -> None:
    # Two rings, as two processes' clients would have, and the converters the SDK derives per
    # run and per activation (a fresh data converter, a tenant's context).
    first = encrypted_data_converter(new_key_ring("2026-01"))
    second = encrypted_data_converter(new_key_ring("2026-02")).with_context(CONTEXT)
    assert _json(first.payload_converter) is _json(second.payload_converter)

    adapters = _json(first.payload_converter)._type_adapter
    (sealed,) = await first.encode([DECISION])
    (back,) = await first.decode([sealed], [ReviewDecision])
    built = adapters.cache_info().currsize
    (again,) = await second.decode(await second.encode([DECISION]), [ReviewDecision])
    # The second converter reused the adapter the first one built: none built anew.
    assert adapters.cache_info().currsize == built
    assert back == again == DECISION


def test_what_each_instance_converts_is_what_the_sdks_converter_does() -> None:
    ours, sdks = SharedPydanticConverter(), PydanticPayloadConverter()
    assert list(ours.converters) == list(sdks.converters)
    values = [DECISION, None, b"raw", {"n": 1}]
    assert ours.to_payloads(values) == sdks.to_payloads(values)
    (payload,) = sdks.to_payloads([DECISION])
    assert ours.from_payloads([payload], [ReviewDecision]) == [DECISION]


class _TakesContext(EncodingPayloadConverter, WithSerializationContext):
    """A converter that would take a context: the SDK then rebuilds the composite's mapping."""

    encoding = "test/context"

    def to_payload(self, value: object) -> Payload | None:
        return None

    def from_payload(self, payload: Payload, type_hint: type | None = None) -> object:
        return None

    def with_context(self, context: SerializationContext) -> _TakesContext:
        return _TakesContext()


def test_one_instances_converters_changed_leave_the_others_alone() -> None:
    one, other = SharedPydanticConverter(), SharedPydanticConverter()
    before = dict(other.converters)
    one._set_converters(*one.converters.values(), _TakesContext())
    assert b"test/context" in one.converters
    assert other.converters == before
    assert b"test/context" not in SharedPydanticConverter().converters
