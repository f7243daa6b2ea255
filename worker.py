"""Run a Tollgate worker: ``python worker.py`` (main queue and the draft queue) or
``python worker.py --queue draft`` for a model-only worker that holds no database URL and no
adapter credentials, only the model key."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.context import ContextActivities
from activities.draft import DraftActivities
from activities.execute import ExecuteActivities
from activities.intake import IntakeActivities
from activities.reconcile import ReconcileActivities
from activities.review import ReviewActivities
from activities.steps import StepActivities
from activities.sweep import SweepActivities
from adapters.crm_http import CrmHttpSource
from adapters.draft_factory import DraftSettings, build_provider
from adapters.messaging_http import MessagingHttpAdapter
from adapters.postgres_ops import OpsStore
from adapters.postgres_receipts import ReceiptStore
from adapters.postgres_store import PostgresStore, create_pool
from policies.matrix import load_matrix
from tollgate.client import build_client
from tollgate.config import Settings
from tollgate.logging import configure_logging
from workflows.process_event import DRAFT_TASK_QUEUE, ProcessEventWorkflow
from workflows.reconcile_write import ReconcileWriteWorkflow
from workflows.sweep import ReceiptSweepWorkflow


@asynccontextmanager
async def main_worker(client: Client, settings: Settings) -> AsyncIterator[Worker]:
    """The orchestration worker: workflows plus every activity that touches the store or a
    target. One connection pool per worker."""
    if not settings.database_url or not settings.crm_url or not settings.messaging_url:
        raise SystemExit("DATABASE_URL, TOLLGATE_CRM_URL and TOLLGATE_MESSAGING_URL must be set "
                         "(or run `tollgate dev`)")
    pool = await create_pool(settings.database_url)
    crm = CrmHttpSource(settings.crm_url)
    messaging = MessagingHttpAdapter(settings.messaging_url)
    store, receipts, ops = PostgresStore(pool), ReceiptStore(pool), OpsStore(pool)
    adapters = {messaging.name: messaging}
    intake = IntakeActivities(store, ops, settings.tenant_secrets(), load_matrix())
    context = ContextActivities(store, crm)
    steps = StepActivities(store)
    review = ReviewActivities(store)
    execute = ExecuteActivities(store, receipts, ops, adapters, crm)
    reconcile = ReconcileActivities(receipts, ops, adapters)
    sweep = SweepActivities(receipts, adapters)
    worker = Worker(
        client,
        task_queue=settings.task_queue,
        workflows=[ProcessEventWorkflow, ReconcileWriteWorkflow, ReceiptSweepWorkflow],
        # Workflow modules are imported once instead of once per run (-21 % worker CPU,
        # docs/performance.md). They hold constants only (tests/workflows/test_module_state.py);
        # the sandbox still refuses clocks, randomness and I/O inside workflow code.
        workflow_runner=SandboxedWorkflowRunner(
            restrictions=SandboxRestrictions.default.with_passthrough_all_modules()),
        activities=[
            intake.validate_event, context.load_context, steps.record_step, steps.record_refusal,
            review.count_gate_inputs, review.open_review, review.notify_fallback_owner,
            execute.execute_action, reconcile.lookup_write, reconcile.resend_write,
            reconcile.dead_letter_write, sweep.sweep_receipts,
        ],
    )
    try:
        async with worker:
            yield worker
    finally:
        await crm.aclose()
        await messaging.aclose()
        await pool.close()


@asynccontextmanager
async def draft_worker(client: Client, settings: Settings) -> AsyncIterator[Worker]:
    """The model worker: only the draft activity, on its own queue."""
    provider = build_provider(DraftSettings.from_env(settings.env))
    drafts = DraftActivities(provider)
    worker = Worker(client, task_queue=DRAFT_TASK_QUEUE, activities=[drafts.draft_message])
    async with worker:
        yield worker


#: What a model-only worker must not hold: a prompt-injected model call then has nothing to reach.
DRAFT_WORKER_FORBIDDEN = ("DATABASE_URL", "TOLLGATE_CRM_URL", "TOLLGATE_MESSAGING_URL",
                          "TOLLGATE_TENANTS_FILE")


def check_draft_environment(env: Mapping[str, str]) -> None:
    """Refuse to run the draft worker with a database URL or adapter credentials in reach."""
    held = [name for name in DRAFT_WORKER_FORBIDDEN if env.get(name)]
    if held:
        raise SystemExit("the draft worker holds only the model key; remove from its "
                         f"environment: {', '.join(held)}")


async def run(queue: str, settings: Settings) -> None:
    if queue == "draft":
        check_draft_environment(settings.env)
    client = await build_client(settings.temporal_address, settings.namespace, env=settings.env)
    async with AsyncExitStack() as stack:
        if queue in ("main", "all"):
            await stack.enter_async_context(main_worker(client, settings))
        if queue in ("draft", "all"):
            await stack.enter_async_context(draft_worker(client, settings))
        print(f"worker running ({queue}) against {settings.temporal_address}; Ctrl-C stops it",
              flush=True)
        await asyncio.Event().wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queue", choices=["all", "main", "draft"], default="all")
    args = parser.parse_args(argv)
    configure_logging()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run(args.queue, Settings.from_env()))


if __name__ == "__main__":
    main()
