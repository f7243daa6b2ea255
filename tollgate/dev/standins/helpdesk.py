"""Helpdesk stand-in (issue 32): ticket assignments keyed by ``Idempotency-Key``, looked up by
it, with the messaging stand-in's fault injection (it is the same keyed-write target with other
records: ``MessagingStandIn``).

    POST /assignments                 Idempotency-Key required; body {tenant_id, customer_ref,
                                      ticket_ref, queue, intent, correlation_id, reply: str|null}
                                      -> 201 assignment (first time) | 200 the SAME one
    GET  /assignments/by-key/{key}    -> 200 assignment | 404
    GET  /assignments?tenant_id=...   -> 200 [assignment, ...]
    GET  /assignments/count           -> 200 {"count": stored, "post_attempts": POSTs received}
    POST /_reset, POST /_mode, POST|GET|DELETE /_faults   as the messaging stand-in

    assignment = {id, idempotency_key, status: "accepted", tenant_id, customer_ref, ticket_ref,
                  queue, intent, correlation_id, reply, created_at}

One assignment assigns the ticket to the queue and, when ``reply`` is set, posts that reply on
the ticket for the customer, as a real helpdesk's ticket update does in one call.
"""

from __future__ import annotations

from typing import Any

from tollgate.dev.standins.messaging import MessagingStandIn


class HelpdeskStandIn(MessagingStandIn):
    collection = "assignments"
    fields = ("tenant_id", "customer_ref", "ticket_ref", "queue", "intent", "correlation_id")
    optional_fields = ("reply",)
    id_prefix = "asg"

    def assignments(self, tenant_id: str | None = None) -> list[dict[str, Any]]:
        return self.messages(tenant_id)

    def for_ticket(self, ticket_ref: str) -> list[dict[str, Any]]:
        """Every stored assignment of one ticket (a double assignment shows as two)."""
        return [a for a in self.messages() if a["ticket_ref"] == ticket_ref]
