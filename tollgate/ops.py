"""`tollgate ops`: what an operator does. Kill switches and dead letters need only PostgreSQL,
so they work while the Temporal server is down; replay and state need Temporal too."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy

from adapters.postgres_ops import OpsStore
from adapters.postgres_receipts import ReceiptStore
from contracts import ReceiptStatus
from tollgate.config import Settings

#: Dead letters whose replay is a new attempt of the same action; others are fixed upstream.
REPLAYABLE = frozenset({"unreconciled_write"})


def add_ops_parser(sub: Any) -> None:
    ops = sub.add_parser("ops", help="operator: state, kill switches, dead letters, sweep")
    osub = ops.add_subparsers(dest="ops_cmd", required=True)
    osub.add_parser("state", help="current state of one event").add_argument("workflow_id")
    for name, text in (("kill", "close a kill switch"), ("reopen", "reopen a kill switch")):
        p = osub.add_parser(name, help=text)
        p.add_argument("--adapter", default="*", help="adapter name, or * for all")
        p.add_argument("--tenant", default="*", help="tenant id, or * for all")
        p.add_argument("--operator", required=True)
        p.add_argument("--reason", required=True)
        if name == "reopen":
            p.add_argument("--canary", type=int, metavar="N",
                           help="let N actions through, then close again until confirmed")
    osub.add_parser("switches", help="list kill switches")
    dlq = osub.add_parser("dlq", help="dead letters").add_subparsers(dest="dlq_cmd",
                                                                     required=True)
    dlq.add_parser("list").add_argument("--status",
                                        choices=["OPEN", "APPROVED", "REPLAYED", "CLOSED"])
    dlq.add_parser("show").add_argument("id", type=int)
    for name in ("approve", "replay"):
        p = dlq.add_parser(name)
        p.add_argument("id", type=int)
        p.add_argument("--operator", required=True)
        if name == "approve":
            p.add_argument("--reason", required=True)
    sweep = osub.add_parser("sweep", help="receipt sweep: run now, or install the schedule")
    sweep.add_argument("--install", action="store_true",
                       help="create the Temporal Schedule (every 5 min) if it is missing")
    ops.set_defaults(func=run_ops)


def run_ops(args: argparse.Namespace) -> int:
    return asyncio.run(ops_main(args, Settings.from_env()))


async def ops_main(args: argparse.Namespace, settings: Settings) -> int:
    """Runs one parsed `tollgate ops` command; returns the exit code."""
    if args.ops_cmd == "state":
        return await _state(settings, args.workflow_id)
    if args.ops_cmd == "sweep":
        return await _sweep(settings, install=args.install)
    handler = {"kill": _kill, "reopen": _kill, "switches": _switches, "dlq": _dlq}[args.ops_cmd]
    return await _with_db(settings, lambda pool: handler(pool, args, settings))


async def _with_db(settings: Settings, go: Callable[[asyncpg.Pool], Awaitable[int]]) -> int:
    if not settings.database_url:
        print("DATABASE_URL is not set and no `tollgate dev` is running", file=sys.stderr)
        return 2
    from adapters.postgres_store import create_pool

    pool = await create_pool(settings.database_url, max_size=2)
    try:
        return await go(pool)
    finally:
        await pool.close()


async def _state(settings: Settings, workflow_id: str) -> int:
    from tollgate.client import build_client

    client = await build_client(settings.temporal_address, settings.namespace, env=settings.env)
    print(await client.get_workflow_handle(workflow_id).query("state"))
    return 0


async def ensure_sweep_schedule(client: Client, task_queue: str) -> bool:
    """Create the receipt-sweep schedule unless it exists. True when it was created."""
    from temporalio.client import (
        Schedule,
        ScheduleActionStartWorkflow,
        ScheduleAlreadyRunningError,
        ScheduleIntervalSpec,
        ScheduleSpec,
    )

    from contracts.sweep import SweepRequest
    from workflows.sweep import SWEEP_SCHEDULE_ID, ReceiptSweepWorkflow
    from workflows.timeouts import SWEEP_EVERY

    action = ScheduleActionStartWorkflow(ReceiptSweepWorkflow.run, SweepRequest(),
                                         id="receipt-sweep", task_queue=task_queue)
    spec = ScheduleSpec(intervals=[ScheduleIntervalSpec(every=SWEEP_EVERY)])
    try:
        await client.create_schedule(SWEEP_SCHEDULE_ID, Schedule(action=action, spec=spec))
    except ScheduleAlreadyRunningError:
        return False
    return True


async def _sweep(settings: Settings, *, install: bool) -> int:
    from contracts.sweep import SweepRequest
    from tollgate.client import build_client
    from workflows.sweep import ReceiptSweepWorkflow

    client = await build_client(settings.temporal_address, settings.namespace, env=settings.env)
    if install:
        made = await ensure_sweep_schedule(client, settings.task_queue)
        print("sweep schedule created" if made else "sweep schedule already exists")
        return 0
    report = await client.execute_workflow(
        ReceiptSweepWorkflow.run, SweepRequest(), id="receipt-sweep-manual",
        task_queue=settings.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )
    print(report.model_dump_json(indent=2))
    return 0 if not report.drift_missing_at_target else 1


async def _kill(pool: asyncpg.Pool, args: argparse.Namespace, _: Settings) -> int:
    closing = args.ops_cmd == "kill"
    canary = None if closing else args.canary
    await OpsStore(pool).set_switch(adapter=args.adapter, tenant_id=args.tenant, closed=closing,
                                    reason=args.reason, actor=args.operator, canary=canary)
    what = "closed" if closing else (f"reopened as a canary of {canary}" if canary else "reopened")
    print(f"kill switch {args.adapter}/{args.tenant} {what}")
    return 0


async def _switches(pool: asyncpg.Pool, args: argparse.Namespace, _: Settings) -> int:
    rows = await OpsStore(pool).switches()
    if not rows:
        print("no kill switch rows: everything open")
    for r in rows:
        state = "CLOSED" if r["closed"] else "open"
        left = r["canary_remaining"]
        canary = f" canary left {left}" if left is not None else ""
        print(f"{r['adapter']}/{r['tenant_id']}: {state}{canary} ({r['reason']}; "
              f"{r['changed_by']} {r['changed_at']:%Y-%m-%d %H:%M})")
    return 0


async def _dlq(pool: asyncpg.Pool, args: argparse.Namespace, settings: Settings) -> int:
    ops = OpsStore(pool)
    if args.dlq_cmd == "list":
        for r in await ops.dead_letters(args.status):
            print(f"{r['id']:>5} {r['status']:9} {r['error_class']}/{r['error_code']:22} "
                  f"{r['workflow_id']}  owner {r['owner']}")
        return 0
    row = await ops.dead_letter_row(args.id)
    if row is None:
        print(f"no dead letter {args.id}", file=sys.stderr)
        return 2
    if args.dlq_cmd == "show":
        shown = {k: v for k, v in row.items() if k != "replay_input"}
        print(json.dumps(shown, indent=2, default=str))
        return 0
    if args.dlq_cmd == "approve":
        ok = await ops.approve_dead_letter(args.id, actor=args.operator, reason=args.reason)
        print(f"dead letter {args.id} approved for one replay" if ok
              else f"dead letter {args.id} is closed")
        return 0 if ok else 2
    return await _replay(pool, ops, row, args.operator, settings)


async def _replay(pool: asyncpg.Pool, ops: OpsStore, row: dict[str, Any], operator: str,
                  settings: Settings) -> int:
    """A new attempt of the same action (same key, same correlation id), once per approval,
    and never when the receipt already says the action happened."""
    dl_id = int(row["id"])
    if row["error_code"] not in REPLAYABLE or not row["replay_input"]:
        print(f"dead letter {dl_id} is not replayed from here: {row['replay_plan']}",
              file=sys.stderr)
        return 2
    receipt = await ReceiptStore(pool).get(row["action_key"])
    if receipt is not None and receipt.status == ReceiptStatus.SUCCEEDED:
        await ops.close_dead_letter(dl_id, actor=operator, reason="receipt already SUCCEEDED")
        print(f"not replayed: the action already happened (receipt {receipt.action_key} "
              f"SUCCEEDED, external id {receipt.external_id})")
        return 0
    number = await ops.claim_replay(dl_id, actor=operator)
    if number is None:
        print(f"dead letter {dl_id} has no unused approval: `tollgate ops dlq approve` first",
              file=sys.stderr)
        return 2
    from contracts import ReconcileRequest, ReconcileResult
    from tollgate.client import build_client
    from workflows.reconcile_write import ReconcileWriteWorkflow

    request = ReconcileRequest.model_validate(json.loads(row["replay_input"]))
    client = await build_client(settings.temporal_address, settings.namespace, env=settings.env)
    result: ReconcileResult = await client.execute_workflow(
        ReconcileWriteWorkflow.run, request, task_queue=settings.task_queue,
        id=f"reconcile/{request.action.action_key}/replay-{number}",
    )
    receipt_text = (f"receipt {result.receipt.status} {result.receipt.external_id or ''}"
                    if result.receipt else "no receipt")
    print(f"replay {number} of dead letter {dl_id}: {result.status}, {receipt_text}")
    return 0 if result.status in ("succeeded", "resent") else 1
