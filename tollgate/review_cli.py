"""`tollgate review`: a reviewer's queue and decisions, without reading Temporal internals.

``list`` reads the search attributes (state, tenant, review SLA); ``show`` reads the workflow's
``review_ticket`` query and PostgreSQL (the newest draft, every decision); ``approve``,
``reject`` and ``request-info`` send the ``review`` update and print why a decision was
refused. A decision for an event whose workflow has already finished never reaches it, so it is
recorded here as refused (``review_closed``, or ``cross_tenant``): every decision leaves a row.

The role is whatever ``--role`` claims and the tenant whatever ``--tenant`` says, unless
``--token`` (or ``TOLLGATE_TOKEN``) gives an access token: then they are the token's
(docs/api.md).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from contracts.base import ID_PATTERN
from tollgate.config import Settings

if TYPE_CHECKING:
    from temporalio.client import Client

    from adapters.postgres_store import ReviewRecord
    from contracts import ReviewDecision, ReviewTicket

#: A query waits for a worker; with none running, say so instead of hanging.
QUERY_TIMEOUT = timedelta(seconds=10)
DECISIONS = {"approve": "approve", "reject": "reject", "request-info": "request_info"}


def add_review_parser(sub: Any) -> None:
    review = sub.add_parser("review", help="reviewer: list, show and decide")
    rsub = review.add_subparsers(dest="review_cmd", required=True)
    rlist = rsub.add_parser("list", help="records waiting for review, with age and SLA left")
    rlist.add_argument("--tenant")
    rlist.add_argument("--token", default=os.environ.get("TOLLGATE_TOKEN"),
                       help="access token (or TOLLGATE_TOKEN): list its tenant's reviews")
    rsub.add_parser("show", help="draft, sources, unknowns, risk, policy, decisions").add_argument(
        "workflow_id")
    for name in DECISIONS:
        p = rsub.add_parser(name)
        p.add_argument("workflow_id")
        p.add_argument("--reviewer")
        p.add_argument("--role", default="reviewer")
        p.add_argument("--reason", required=True)
        p.add_argument("--tenant", help="the reviewer's tenant; another tenant's event refuses")
        p.add_argument("--token", default=os.environ.get("TOLLGATE_TOKEN"),
                       help="access token (or TOLLGATE_TOKEN): reviewer, role and tenant come "
                            "from it, overriding --reviewer/--role/--tenant")
    review.set_defaults(func=run_review)


def run_review(args: argparse.Namespace) -> int:
    from tollgate.client import build_client

    async def go() -> int:
        settings = Settings.from_env()
        if args.review_cmd != "show" and args.token:
            from tollgate.http.identity import apply_token

            await apply_token(args, settings)
        elif args.review_cmd not in ("list", "show") and not args.reviewer:
            print("give --token (or TOLLGATE_TOKEN), or --reviewer", file=sys.stderr)
            return 2
        client = await build_client(settings.temporal_address, settings.namespace)
        if args.review_cmd == "list":
            return await review_list(client, tenant=args.tenant)
        if args.review_cmd == "show":
            return await review_show(client, settings.database_url, args.workflow_id)
        return await review_decide(
            client, settings.database_url, args.workflow_id, decision=DECISIONS[args.review_cmd],
            reviewer=args.reviewer, role=args.role, reason=args.reason, tenant=args.tenant)

    return asyncio.run(go())


# --- list ----------------------------------------------------------------------------------


async def review_list(client: Client, *, tenant: str | None, now: datetime | None = None) -> int:
    """Records waiting for review, the nearest SLA first."""
    from workflows.process_event import REVIEW_DUE, TENANT

    query = "TollgateState = 'AWAITING_REVIEW'"
    if tenant is not None:
        if not re.fullmatch(ID_PATTERN, tenant):  # it goes into the query text
            print(f"not a tenant id: {tenant!r}", file=sys.stderr)
            return 2
        query += f" AND TollgateTenant = '{tenant}'"
    now = now or datetime.now(UTC)
    rows = []
    async for wf in client.list_workflows(query):
        attrs = wf.typed_search_attributes
        due = attrs.get(REVIEW_DUE)
        rows.append((due or datetime.max.replace(tzinfo=UTC), wf.id, attrs.get(TENANT) or "-",
                     _span(now - wf.start_time), _sla_left(due, now)))
    if not rows:
        print("nothing waiting for review" + (f" for {tenant}" if tenant else ""))
        return 0
    width = max(len(r[1]) for r in rows)
    print(f"{'workflow':{width}}  {'tenant':12} {'waiting':>9}  SLA")
    for _, wf_id, wf_tenant, age, sla in sorted(rows):
        print(f"{wf_id:{width}}  {wf_tenant:12} {age:>9}  {sla}")
    return 0


def _span(delta: timedelta) -> str:
    minutes = max(int(delta.total_seconds() // 60), 0)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    return f"{days}d {hours:02d}h" if days else f"{hours}h {minutes:02d}m"


def _sla_left(due: datetime | None, now: datetime) -> str:
    if due is None:
        return "-"
    return f"{_span(due - now)} left" if due >= now else f"overdue {_span(now - due)}"


# --- show ----------------------------------------------------------------------------------


async def review_show(client: Client, database_url: str | None, workflow_id: str,
                      *, now: datetime | None = None) -> int:
    now = now or datetime.now(UTC)
    ticket = await _ticket(client, workflow_id)
    record = await _record(database_url, workflow_id) if database_url else None
    if ticket is None and record is None:
        print(f"{workflow_id}: no such event (or Temporal and PostgreSQL unreachable)",
              file=sys.stderr)
        return 2
    print(workflow_id)
    event = record.event if record else {}
    state = ticket.state.value if ticket else event.get("state")
    policy = (ticket.policy_version if ticket else None) or event.get("policy_version")
    print(f"  tenant {event.get('tenant_id', '?')} · {event.get('event_type', '?')} · state "
          f"{state} · policy {policy or '-'} · risk {ticket.risk if ticket else '-'}")
    if ticket is not None and ticket.request_id is not None and state == "AWAITING_REVIEW":
        print(f"  review request {ticket.request_id} · draft v{ticket.draft_version} · roles "
              f"{', '.join(ticket.required_roles) or '-'}")
        due, deadline = ticket.review_due_at, ticket.review_deadline
        print(f"  SLA {_when(due)} ({_sla_left(due, now)}) · expires {_when(deadline)}")
    _print_draft(ticket, record)
    if record is None:
        print("decisions: PostgreSQL not configured (DATABASE_URL or a running `tollgate dev`)")
        return 0
    print("decisions")
    if not record.decisions:
        print("  none")
    for d in record.decisions:
        verdict = "accepted" if d["accepted"] else f"refused: {d['refusal_code']}"
        who = f"{d['reviewer']} ({d['role']})"
        print(f"  {d['at']:%Y-%m-%d %H:%M:%S}  {d['decision']:12} v{d['draft_version'] or '-':<3}"
              f" {who:28} {verdict:34} {d['reason']!r}")
    return 0


def _print_draft(ticket: ReviewTicket | None, record: ReviewRecord | None) -> None:
    row = record.draft if record else None
    version = (ticket.draft_version if ticket else None) or (row["version"] if row else None)
    draft = ticket.draft.model_dump() if ticket and ticket.draft else (row or {}).get("draft")
    if version is None:
        print("draft: none yet")
        return
    source = f" ({row['provider']} / {row['model']}, {row['status']})" if row else ""
    print(f"draft v{version}{source}")
    if not draft:
        for finding in (row or {}).get("findings") or []:
            print(f"  finding: {finding}")
        print("  no readable draft")
        return
    print(f"  {draft['message']}")
    print(f"  sources: {', '.join(draft.get('source_refs') or []) or '-'}")
    print(f"  unknowns: {', '.join(draft.get('unknowns') or []) or '-'}")
    if draft.get("reason"):
        print(f"  why: {draft['reason']}")


def _when(at: datetime | None) -> str:
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if at else "-"


async def _ticket(client: Client, workflow_id: str) -> ReviewTicket | None:
    from temporalio.service import RPCError

    from contracts import ReviewTicket

    try:
        return await client.get_workflow_handle(workflow_id).query(
            "review_ticket", result_type=ReviewTicket, rpc_timeout=QUERY_TIMEOUT)
    except RPCError:
        return None


async def _record(database_url: str, workflow_id: str) -> ReviewRecord | None:
    import asyncpg

    from adapters.postgres_store import PostgresStore

    # A plain pool, not create_pool(): a reviewer's command never migrates the schema.
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=1)
    try:
        return await PostgresStore(pool).review_record(workflow_id)
    finally:
        await pool.close()


# --- decide --------------------------------------------------------------------------------


async def review_decide(
    client: Client, database_url: str | None, workflow_id: str, *, decision: str,
    reviewer: str, role: str, reason: str, tenant: str | None,
) -> int:
    """Send one decision; 0 accepted, 1 refused (with the reason), 2 not delivered."""
    from pydantic import ValidationError
    from temporalio.client import WorkflowExecutionStatus, WorkflowUpdateFailedError
    from temporalio.service import RPCError

    from contracts import ReviewAck, ReviewDecision

    handle = client.get_workflow_handle(workflow_id)
    try:
        running = (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
    except RPCError as exc:
        print(f"{workflow_id}: cannot read it: {exc.message}", file=sys.stderr)
        return 2
    ticket = await _ticket(client, workflow_id) if running else None
    try:
        # With no open review the workflow still gets the decision, refuses and records it.
        made = ReviewDecision(
            request_id=(ticket.request_id if ticket else None) or "none",
            decision=decision, reviewer=reviewer, role=role, reason=reason,
            draft_version=(ticket.draft_version if ticket else None) or 0, tenant_id=tenant)
    except ValidationError as exc:
        print(f"invalid decision: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}",
              file=sys.stderr)
        return 2
    if running:
        try:
            ack = await handle.execute_update("review", made, result_type=ReviewAck)
        except (WorkflowUpdateFailedError, RPCError) as exc:
            if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
                print(f"{workflow_id}: decision not delivered: {exc}", file=sys.stderr)
                return 2
        else:
            print("accepted: " + ack.message if ack.accepted
                  else f"refused: {ack.reason_code}: {ack.message}")
            return 0 if ack.accepted else 1
    return await _record_undelivered(database_url, workflow_id, made)


async def _record_undelivered(
    database_url: str | None, workflow_id: str, made: ReviewDecision
) -> int:
    import asyncpg

    from adapters.postgres_store import PostgresStore

    if not database_url:
        print(f"{workflow_id} has finished; the decision changes nothing (not recorded: "
              "PostgreSQL not configured)", file=sys.stderr)
        return 1
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=1)
    try:
        code = await PostgresStore(pool).record_undelivered_decision(
            workflow_id=workflow_id, decision=made,
            decision_key=f"{workflow_id}#u{uuid.uuid4().hex[:16]}")
    finally:
        await pool.close()
    print(f"refused: {code or 'review_closed'}: {workflow_id} has finished; the decision "
          "changes nothing" + (" (recorded)" if code else ""))
    return 1
