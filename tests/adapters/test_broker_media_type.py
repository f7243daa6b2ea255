"""A media type is case-insensitive (RFC 9110 section 8.3.1): a structured CloudEvent published
on RabbitMQ as ``Application/CloudEvents+JSON`` is the same event as one published in lower
case. It was read as a bare Tollgate event, and dead-lettered ``bad_event`` with a reason
that blamed the event."""

from __future__ import annotations

import pytest
from cloudevents.core.bindings import rabbitmq as ce_rabbitmq
from cloudevents.core.formats.json import JSONFormat

from adapters.broker.rabbitmq import Inbound
from tests.http.test_cloudevents import cloud_event
from tollgate.intake.broker import parse_message


@pytest.mark.parametrize("spelled", ["Application/CloudEvents+JSON",
                                     "APPLICATION/CLOUDEVENTS+JSON; charset=UTF-8"])
def test_a_structured_cloudevents_media_type_is_read_whatever_its_case(spelled: str) -> None:
    message = ce_rabbitmq.to_structured(cloud_event(), JSONFormat())
    assert message.content_type == "application/cloudevents+json"

    expected = parse_message(Inbound(body=message.body, content_type=message.content_type))
    shouted = parse_message(Inbound(body=message.body, content_type=spelled))

    assert shouted == expected
