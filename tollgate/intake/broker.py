"""The RabbitMQ consumer loop: broker messages become fan-out workflow starts (docs/fan-out.md).

``python -m tollgate.intake.broker`` runs it against ``TOLLGATE_AMQP_URL`` and Temporal from the
usual settings. A message is a ``BusinessEvent`` in JSON, or a CloudEvent: structured (content
type ``application/cloudevents+json``) or binary (``ce-`` headers), mapped by ``ce_mapping``. A
message is acked only after ``publish_event`` returned (the start is durable); a message that is
not a valid event goes to the dead-letter exchange with the reason. The edge rules
(``policies.edge_text``: size, depth, NUL, lone surrogates, controls, numbers) come first, on the
body in either form, so nothing deep is parsed recursively and no such text reaches Temporal or
PostgreSQL; its reason names the rule and the field (ADR 0032).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from temporalio.client import Client

from adapters.broker.rabbitmq import Handler, Inbound, Outcome, RabbitIntake
from contracts.bus import dead_letter_queue
from contracts.errors import InvalidInput, RetryableError
from contracts.events import MAX_EVENT_CHARS
from contracts.fanout import BusinessEvent, SubscriptionSet
from policies import edge_text
from policies.subscriptions import load_subscriptions
from tollgate.config.settings import Settings
from tollgate.intake import ce_mapping
from tollgate.intake.publish import publish_event
from tollgate.observability.messaging import process_span


def parse_message(message: Inbound) -> BusinessEvent:
    """One-line ``InvalidInput`` for anything that is not a valid event (never a traceback):
    ``{rule}: {field}: {why}`` for an edge rule, ``bad_event: {field}: {type}`` for the model."""
    try:
        text = message.body.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("not_json", "message body is not UTF-8 JSON") from None
    data, violation = edge_text.load_json(text, max_chars=MAX_EVENT_CHARS)
    if violation is not None:
        raise InvalidInput(violation.rule, violation.message)
    if _is_cloudevent(message):
        return _validated(_cloudevent_fields(message))
    return _validated(data)


def _media_type(message: Inbound) -> str | None:
    """The content type in lower case: media types and their charset are case-insensitive
    (RFC 9110 section 8.3.1), and the CloudEvents binding compares them as written."""
    return message.content_type.lower() if message.content_type else None


def _is_cloudevent(message: Inbound) -> bool:
    return (_media_type(message) or "").split(";")[0].strip() == ce_mapping.STRUCTURED_TYPE \
        or any(str(k).lower().startswith("ce-") for k in message.headers)


def _cloudevent_fields(message: Inbound) -> dict[str, Any]:
    event = ce_mapping.read_rabbitmq(message.headers, _media_type(message), message.body)
    fields = event if isinstance(event, ce_mapping.CeRefusal) else \
        ce_mapping.to_business_event(event)
    if isinstance(fields, ce_mapping.CeRefusal):
        raise InvalidInput(fields.reason_code, fields.message)
    return fields


def _validated(data: Any) -> BusinessEvent:
    try:
        return BusinessEvent.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "event"
        raise InvalidInput("bad_event", f"{where}: {first['type']}") from None


def consumer_dead_letter_queues(subs: SubscriptionSet) -> tuple[str, ...]:
    """``<consumer>.<event>.dlq`` of every subscription (seed 002), declared with the topology
    so an operator sees each consumer's queue before its first failure."""
    return tuple(dead_letter_queue(s.consumer, t) for s in subs.subscriptions
                 for t in s.event_types)


def event_handler(client: Client, task_queue: str) -> Handler:
    async def handle(message: Inbound) -> Outcome:
        # One messaging span per delivery (a no-op while tracing is off): the fan-out start
        # is its child, a dead-lettered message's span names the rule (error.type).
        with process_span(message) as span:
            outcome = await publish_event(client, task_queue, parse_message(message))
            span.set_attribute("tollgate.intake.outcome", outcome)
            return outcome

    return handle


async def run(settings: Settings) -> None:
    from tollgate.runtime.client import build_client
    from tollgate.runtime.entry import start_refusals

    url = settings.broker.amqp_url.get_secret_value() if settings.broker.amqp_url else None
    if not url:
        raise SystemExit("TOLLGATE_AMQP_URL is not set (amqp://user:pass@host:5672/)")
    with start_refusals(settings.temporal_address):  # Temporal down: one line, not a traceback
        client = await build_client(settings.temporal_address, settings.namespace,
                                    env=settings.env)
    intake = RabbitIntake(url)
    try:
        await intake.connect(consumer_dead_letter_queues(load_subscriptions()))
    except RetryableError as exc:  # never the URL: it carries the password
        raise SystemExit(f"{exc.message} (TOLLGATE_AMQP_URL)") from None
    try:
        await intake.consume(event_handler(client, settings.task_queue))
    finally:
        await intake.close()


if __name__ == "__main__":
    from tollgate.observability.logs import configure_logging
    from tollgate.runtime.entry import run_main

    configure_logging()  # JSON lines, as the worker's: aio-pika's own too
    # The client freed before the process exits (tollgate/runtime/entry.py).
    run_main(run(Settings.from_env()))
