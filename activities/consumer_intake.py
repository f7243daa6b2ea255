"""A consumer that acts hands its event to the control core (docs/fan-out.md, "Consumers that
act"): this activity turns the bus event into the signed envelope a ProcessEvent run takes.

Tollgate is the producer of that envelope, so it signs it with the tenant's own key, as any
producer does; the run then checks it like every other event (signature, tenant, schema, clock,
policy, the idempotency gate). The envelope names the event by its business key
``{event_id}.{consumer}`` (``policies.subscriptions.control_core_key``) and keeps the bus event
id as its correlation id; the customer the order belongs to is its entity, i.e. the recipient
the send, the consent check and the daily limit read. Nothing here is random or a run id, so a
retried attempt builds the same envelope and the same workflow id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime

import structlog
from temporalio import activity

from activities.errors import to_application_error
from contracts import IntakeRequest
from contracts.base import ID_PATTERN
from contracts.errors import InvalidInput, TollgateError
from contracts.events import MAX_EVENT_CHARS, STARTED_SHAPE
from contracts.fanout import ConsumeRequest
from policies import signing
from policies.subscriptions import control_core_key

log = structlog.get_logger("tollgate.fanout")


class ConsumerIntakeActivities:
    def __init__(self, tenant_secrets: Mapping[str, str]) -> None:
        self._secrets = tenant_secrets

    @activity.defn
    async def control_core_event(self, request: ConsumeRequest) -> IntakeRequest:
        """The signed envelope of ``request``'s event for its consumer's child ProcessEvent.

        Raises (as the taxonomy's ``ApplicationError``): ``InvalidInput`` for a tenant with no
        key here, an event with no customer to confirm to, or one too large for the intake:
        final for this consumer, which then dead-letters it alone."""
        event, consumer = request.event, request.subscription.consumer
        try:
            raw = self._envelope(request)
        except TollgateError as exc:
            log.warning("control_core_event", event_id=event.event_id, consumer=consumer,
                        error_code=exc.code)
            raise to_application_error(exc) from None
        log.info("control_core_event", event_id=event.event_id, consumer=consumer)
        return IntakeRequest(raw=raw, received_at=datetime.now(UTC), shape=STARTED_SHAPE)

    def _envelope(self, request: ConsumeRequest) -> str:
        event, consumer = request.event, request.subscription.consumer
        secret = self._secrets.get(event.tenant_id)
        if secret is None:
            raise InvalidInput("unknown_tenant", "the event's tenant has no key on this worker")
        customer = event.payload.get("customer_id")
        if not isinstance(customer, str) or not _is_id(customer):
            raise InvalidInput("bad_payload", "payload.customer_id: missing or not an id")
        key = control_core_key(event.event_id, consumer)
        envelope = {
            "event_id": key, "event_type": event.event_type, "source": f"fan-out/{consumer}",
            "tenant_id": event.tenant_id, "entity_id": customer,
            "schema_version": event.schema_version, "occurred_at": event.occurred_at.isoformat(),
            "correlation_id": event.event_id, "idempotency_key": key, "payload": event.payload,
        }
        envelope["signature"] = signing.sign(envelope, secret)
        raw = json.dumps(envelope, ensure_ascii=False, sort_keys=True)
        if len(raw) > MAX_EVENT_CHARS:
            raise InvalidInput("too_large", f"the envelope is over {MAX_EVENT_CHARS} characters")
        return raw


def _is_id(value: str) -> bool:
    return re.fullmatch(ID_PATTERN, value) is not None
