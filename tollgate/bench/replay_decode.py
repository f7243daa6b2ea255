"""Histories with their payloads decrypted once, up front: replaying these with a converter that
has no codec measures the replay without the codec, so the codec's share of a replay is the
difference between the two figures (``tollgate.bench.replay``).

The walk covers every ``Payload`` a history event holds, wherever it sits (inputs, results,
memo, headers, failures' encoded attributes, maps of payloads), by the protobuf descriptors, so
a new event type needs no change here. Payloads the codec never wrote (search attributes, a
signal sent by hand) pass through ``EncryptionCodec.decrypt`` unchanged.
"""

from __future__ import annotations

import dataclasses

from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes

from tollgate.codec.payload import EncryptionCodec, SharedPydanticConverter

_PAYLOAD = Payload.DESCRIPTOR.full_name


def _decode_in(message: Message, codec: EncryptionCodec) -> None:
    for field, value in message.ListFields():
        kind = field.message_type
        if kind is None:
            continue
        if kind.GetOptions().map_entry:
            item = kind.fields_by_name["value"].message_type
            if item is None:
                continue
            for key in list(value):
                if item.full_name == _PAYLOAD:
                    value[key].CopyFrom(codec.decrypt(value[key]))
                else:
                    _decode_in(value[key], codec)
        elif field.is_repeated:
            for element in value:
                if kind.full_name == _PAYLOAD:
                    element.CopyFrom(codec.decrypt(element))
                else:
                    _decode_in(element, codec)
        elif kind.full_name == _PAYLOAD:
            value.CopyFrom(codec.decrypt(value))
        else:
            _decode_in(value, codec)


def decoded_history(history: WorkflowHistory, codec: EncryptionCodec) -> WorkflowHistory:
    """A copy of ``history`` with every payload decrypted (the original is left as it is)."""
    events = []
    for event in history.events:
        copy = type(event)()
        copy.CopyFrom(event)
        _decode_in(copy, codec)
        events.append(copy)
    return WorkflowHistory(history.workflow_id, events)


def without_codec(converter: DataConverter) -> DataConverter:
    """The same converter without its payload codec (failures still read from the encoded
    attributes, which the decoded histories hold in clear)."""
    return dataclasses.replace(converter, payload_codec=None)


def plain_converter() -> DataConverter:
    """What ``without_codec(encrypted_data_converter(ring))`` gives, for a process that has no
    key ring: the pydantic converter (built once, as the worker's) with failures in encoded
    attributes."""
    return dataclasses.replace(pydantic_data_converter,
                               payload_converter_class=SharedPydanticConverter,
                               failure_converter_class=DefaultFailureConverterWithEncodedAttributes)
