"""The helpdesk over HTTP (issue 32): one ticket assignment per triage action, keyed by
``Idempotency-Key: <action_key>`` and looked up by it.

The protocol and every outcome's classification are the messaging target's (``messaging.py``:
unknown writes reconciled by key, 429 honoured, 503 retried only where the target dedupes),
with other records and codes (``helpdesk_504`` ...). The action's body is the approved
``Assignment`` as canonical JSON (contracts/triage.py); it is read back here into the ticket,
the queue and the optional reply the helpdesk is sent, so what goes out is exactly what the
action token's fingerprint covered. The customer is a reference the helpdesk resolves.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from adapters.http.messaging import MessagingHttpAdapter
from contracts import ActionRequest
from contracts.errors import RejectedError
from contracts.triage import Assignment


class HelpdeskHttpAdapter(MessagingHttpAdapter):
    name = "helpdesk"
    collection = "assignments"

    def payload(self, request: ActionRequest) -> dict[str, Any]:
        try:
            assignment = Assignment.model_validate_json(request.body)
        except ValidationError:
            # Nothing was sent: an action whose body is no assignment cannot be one (final).
            raise RejectedError("helpdesk_bad_assignment",
                                "the action body is not an assignment") from None
        return {
            "tenant_id": request.ref.tenant_id,
            "customer_ref": request.ref.entity_id,
            "ticket_ref": assignment.ticket_ref,
            "queue": assignment.queue,
            "intent": assignment.intent,
            "reply": assignment.reply,
            "correlation_id": request.ref.correlation_id,
        }
