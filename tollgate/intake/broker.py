"""The RabbitMQ consumer loop: broker messages become fan-out workflow starts (docs/fan-out.md).

``python -m tollgate.intake.broker`` runs it against ``TOLLGATE_AMQP_URL`` and Temporal from the
usual settings. A message is acked only after ``publish_event`` returned (the start is durable); a
message that is not a valid ``BusinessEvent`` goes to the dead-letter exchange with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from pydantic import ValidationError
from temporalio.client import Client

from adapters.broker.rabbitmq import Handler, Outcome, RabbitIntake
from contracts.errors import InvalidInput
from contracts.fanout import BusinessEvent
from tollgate.config.settings import Settings
from tollgate.intake.publish import publish_event


def parse_message(body: bytes) -> BusinessEvent:
    """One-line ``InvalidInput`` for anything that is not a valid event (never a traceback)."""
    try:
        return BusinessEvent.model_validate(json.loads(body))
    except (ValueError, UnicodeDecodeError) as exc:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "event"
            raise InvalidInput("bad_event", f"{where}: {first['type']}") from None
        raise InvalidInput("not_json", "message body is not JSON") from None


def event_handler(client: Client, task_queue: str) -> Handler:
    async def handle(body: bytes) -> Outcome:
        return await publish_event(client, task_queue, parse_message(body))

    return handle


async def run(settings: Settings) -> None:
    from tollgate.runtime.client import build_client

    url = settings.broker.amqp_url.get_secret_value() if settings.broker.amqp_url else None
    if not url:
        raise SystemExit("TOLLGATE_AMQP_URL is not set (amqp://user:pass@host:5672/)")
    client = await build_client(settings.temporal_address, settings.namespace, env=settings.env)
    intake = RabbitIntake(url)
    await intake.connect()
    try:
        await intake.consume(event_handler(client, settings.task_queue))
    finally:
        await intake.close()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run(Settings.from_env()))
