"""`tollgate review`: a reviewer's queue and decisions, without reading Temporal internals."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from tollgate.config import Settings


def add_review_parser(sub: Any) -> None:
    review = sub.add_parser("review", help="reviewer: list, show and decide")
    rsub = review.add_subparsers(dest="review_cmd", required=True)
    rlist = rsub.add_parser("list", help="records waiting for review")
    rlist.add_argument("--tenant")
    rsub.add_parser("show").add_argument("workflow_id")
    for name in ("approve", "reject", "request-info"):
        p = rsub.add_parser(name)
        p.add_argument("workflow_id")
        p.add_argument("--reviewer", required=True)
        p.add_argument("--role", default="reviewer")
        p.add_argument("--reason", required=True)
    review.set_defaults(func=run_review)


def run_review(args: argparse.Namespace) -> int:
    from temporalio.client import WorkflowUpdateFailedError
    from temporalio.service import RPCError

    from tollgate.client import build_client
    from workflows.contracts import ReviewAck, ReviewDecision, ReviewTicket

    async def go() -> int:
        settings = Settings.from_env()
        client = await build_client(settings.temporal_address, settings.namespace)
        if args.review_cmd == "list":
            query = "TollgateState = 'AWAITING_REVIEW'"
            if args.tenant:
                query += f" AND TollgateTenant = '{args.tenant}'"
            async for wf in client.list_workflows(query):
                print(f"{wf.id}  started {wf.start_time:%Y-%m-%d %H:%M:%S}")
            return 0
        handle = client.get_workflow_handle(args.workflow_id)
        try:
            ticket = await handle.query("review_ticket", result_type=ReviewTicket)
        except RPCError as exc:
            print(f"cannot read {args.workflow_id}: {exc.message}", file=sys.stderr)
            return 2
        if args.review_cmd == "show":
            print(ticket.model_dump_json(indent=2))
            return 0
        if ticket.request_id is None or ticket.draft_version is None:
            print(f"{args.workflow_id} is not waiting for review (state {ticket.state})",
                  file=sys.stderr)
            return 2
        decision = ReviewDecision(
            request_id=ticket.request_id, decision=args.review_cmd.replace("-", "_"),
            reviewer=args.reviewer, role=args.role, reason=args.reason,
            draft_version=ticket.draft_version)
        try:
            ack = await handle.execute_update("review", decision, result_type=ReviewAck)
        except (WorkflowUpdateFailedError, RPCError) as exc:
            print(f"{args.workflow_id}: decision not delivered: {exc}", file=sys.stderr)
            return 2
        print(("accepted: " if ack.accepted else "refused: ") + ack.message)
        return 0 if ack.accepted else 1

    return asyncio.run(go())
