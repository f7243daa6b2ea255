"""A media type is case-insensitive (RFC 9110 section 8.3.1): a structured CloudEvent published
on RabbitMQ as ``Application/CloudEvents+JSON`` is the same event as one published in lower
case. It was read as a bare Tollgate event, and dead-lettered ``bad_event`` with a reason
that blamed the event."""

from __future__ import annotations

import pytest
from cloudevents.core.bindings import rabbitmq as ce_rabbitmq
from cloudevents.core.formats.json import JSONFormat

from adapters.broker.rabbitmq import Inbound
from contracts.errors import InvalidInput
from tests.http.cloudevents_support import cloud_event
from tollgate.intake.broker import parse_message


@pytest.mark.parametrize("spelled", ["Application/CloudEvents+JSON",
                                     "APPLICATION/CLOUDEVENTS+JSON; charset=UTF-8"])
def test_a_structured_cloudevents_media_type_is_read_whatever_its_case(spelled: str) -> None:
    message = ce_rabbitmq.to_structured(cloud_event(), JSONFormat())
    assert message.content_type == "application/cloudevents+json"

    expected = parse_message(Inbound(body=message.body, content_type=message.content_type))
    shouted = parse_message(Inbound(body=message.body, content_type=spelled))

    assert shouted == expected


def test_a_broker_message_holding_a_key_twice_is_refused_naming_it() -> None:
    # Structured CloudEvent and bare event alike: json.loads would keep the last value.
    message = ce_rabbitmq.to_structured(cloud_event(), JSONFormat())
    body = message.body[:-1] + b', "subject": "C-2", "subject": "C-1"}'
    with pytest.raises(InvalidInput) as refused:
        parse_message(Inbound(body=body, content_type=message.content_type))
    assert refused.value.code == "duplicate_key"
    assert refused.value.message.startswith("$.subject: ")
