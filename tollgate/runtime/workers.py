"""The worker assembly: which workflows and activities run on which queue, with which adapters.
``worker.py``, ``tollgate dev``, the demo, the bench and the tests all build workers here."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta

import structlog
from temporalio.client import Client
from temporalio.worker import (
    PollerBehavior,
    PollerBehaviorAutoscaling,
    PollerBehaviorSimpleMaximum,
    Worker,
)

from activities.action_token import ActionTokenActivities, TokenGuard
from activities.approval import ApprovalActivities
from activities.circuit import Circuit
from activities.consumer_intake import ConsumerIntakeActivities
from activities.context import ContextActivities
from activities.dead_letters import DeadLetterActivities
from activities.draft import DraftActivities
from activities.execute import ExecuteActivities
from activities.fanout import FanOutActivities
from activities.intake import IntakeActivities
from activities.interceptor import ActivityContextInterceptor
from activities.reconcile import ReconcileActivities
from activities.resend_guard import ResendGuard
from activities.review import ReviewActivities
from activities.steps import StepActivities
from activities.sweep import SweepActivities
from activities.tagging import TaggingActivities, TagModelActivities
from activities.triage import TriageActivities
from adapters.broker.rabbitmq_dead_letters import RabbitConsumerDeadLetters
from adapters.http.crm import CrmHttpSource
from adapters.postgres.action_tokens import ActionTokenStore
from adapters.postgres.circuit import CircuitStore
from adapters.postgres.contacts import ContactStore
from adapters.postgres.fanout import FanOutStore
from adapters.postgres.ops import OpsStore
from adapters.postgres.order_consumers import order_consumers
from adapters.postgres.pool import create_pool
from adapters.postgres.receipts import ReceiptStore
from adapters.postgres.rollout import RolloutStore
from adapters.postgres.store import PostgresStore
from adapters.postgres.tagging import TaggingStore
from adapters.postgres.watch import PostgresStepWatch
from contracts import target_task_queue
from policies.matrix import load_matrix
from tollgate.config.settings import Settings
from tollgate.intake.items import relay_loop, temporal_starter
from tollgate.observability.metrics import start_exporter
from tollgate.runtime.deployment import deployment_config
from tollgate.runtime.models import build_provider, close_providers, triage_provider
from tollgate.runtime.sandbox import workflow_runner
from tollgate.runtime.tag_models import build_tag_provider
from tollgate.runtime.targets import URL_VARIABLES, action_adapters
from tollgate.runtime.token_key import action_token_key
from workflows.fan_out import ConsumeEventWorkflow, FanOutWorkflow
from workflows.process_event import DRAFT_TASK_QUEUE, ProcessEventWorkflow
from workflows.reconcile_write import ReconcileWriteWorkflow
from workflows.sweep import ReceiptSweepWorkflow
from workflows.tag_item import TagItemWorkflow
from workflows.versioned import VERSIONED_WORKFLOWS

log = structlog.get_logger("tollgate.worker")

#: The workflow types of an unversioned main worker (a versioned one: VERSIONED_WORKFLOWS).
MAIN_WORKFLOWS: list[type] = [ProcessEventWorkflow, ReconcileWriteWorkflow, ReceiptSweepWorkflow,
                              TagItemWorkflow, FanOutWorkflow, ConsumeEventWorkflow]


@asynccontextmanager
async def main_worker(client: Client, settings: Settings, *,
                      drain: timedelta = timedelta(0)) -> AsyncIterator[Worker]:
    """The orchestration worker: workflows plus every activity that touches the store or a
    target. One connection pool per worker. ``drain``: how long activities in flight may run on
    after shutdown starts before they are cancelled (and retried on another worker)."""
    if not settings.dsn or not settings.crm_url or not settings.messaging_url:
        raise SystemExit("DATABASE_URL, TOLLGATE_CRM_URL and TOLLGATE_MESSAGING_URL must be set "
                         "(or run `tollgate dev`)")
    token_key = action_token_key(settings)  # before any connection: a missing key stops here
    targets, rates = settings.targets.capabilities, settings.targets.rates
    # The same version on every queue of the process: a pinned run's activities go to it.
    version = deployment_config(settings.worker)
    pool = await create_pool(settings.dsn)
    # Failing steps and held sends, on a connection of its own (activities/step_watch.py).
    watch = PostgresStepWatch(settings.dsn)
    crm = CrmHttpSource(settings.crm_url, connections=settings.targets.connections)
    store, receipts, ops = PostgresStore(pool), ReceiptStore(pool), OpsStore(pool)
    adapters = action_adapters(settings)
    if unknown := sorted(set(rates) - set(adapters)):
        raise SystemExit(f"TOLLGATE_TARGET_RATES names no known target: {', '.join(unknown)}")
    # A target without its URL gets no worker on its queue here, and its sends wait there with
    # no timeout (docs/runbook.md, "A target no worker serves"): said once, at start. The
    # variable's name only, never a URL (one may carry credentials).
    for name in sorted(set(URL_VARIABLES) - set(adapters)):
        log.warning("target_not_polled", target=name, variable=URL_VARIABLES[name],
                    task_queue=target_task_queue(settings.task_queue, name),
                    detail=f"{URL_VARIABLES[name]} is not set: this worker does not poll "
                           f"target {name}'s task queue; its sends wait there until a worker "
                           "with it set runs")
    matrix = load_matrix()
    intake = IntakeActivities(store, ops, settings.tenant_secrets(), matrix)
    context = ContextActivities(store, crm, ContactStore(pool))
    steps = StepActivities(store)
    review = ReviewActivities(store)
    circuit = Circuit(CircuitStore(pool), matrix)
    token_store = ActionTokenStore(pool)
    tokens = ActionTokenActivities(token_store, token_key,
                                   timedelta(seconds=settings.worker.action_token_ttl_s))
    approval = ApprovalActivities(review, steps, tokens)
    execute = ExecuteActivities(
        store, receipts, ops, adapters, crm, RolloutStore(pool), circuit=circuit,
        lookup_windows={name: timedelta(seconds=c.lookup_window_s)
                        for name, c in targets.items() if c.lookup_window_s},
        tokens=TokenGuard(token_store, token_key))
    reconcile = ReconcileActivities(receipts, ops, adapters,
                                    guard=ResendGuard(token_store, crm, token_key))
    dead_letters = DeadLetterActivities(ops)
    sweep = SweepActivities(receipts, adapters, circuit)
    tagging_store = TaggingStore(pool)
    tagging = TaggingActivities(tagging_store)
    consumers = order_consumers()
    # Fault injection for the demo and drills: consumers named here refuse every delivery.
    for name in settings.worker.consumers_down:
        if name in consumers:
            consumers[name].down = True
    # With a broker, a consumer's dead letter is also on its <consumer>.<event>.dlq queue.
    amqp = settings.broker.amqp_url
    bus = RabbitConsumerDeadLetters(amqp.get_secret_value()) if amqp else None
    fanout = FanOutActivities(FanOutStore(pool), consumers, bus)
    # A consumer that acts hands its event to the control core, signed as a producer would.
    consumer_intake = ConsumerIntakeActivities(settings.tenant_secrets())
    worker = Worker(
        client,
        task_queue=settings.task_queue,
        deployment_config=version,
        # Versioned: the same types with their declared behaviour (workflows/versioned.py).
        workflows=VERSIONED_WORKFLOWS if version else MAIN_WORKFLOWS,
        interceptors=[ActivityContextInterceptor(watch)],
        # Workflow modules imported once per process, not per run (tollgate/runtime/sandbox.py).
        workflow_runner=workflow_runner(),
        graceful_shutdown_timeout=drain,
        max_cached_workflows=settings.worker.max_cached_workflows,
        # Each new event's first task waits for a poll on the main queue: the SDK's fixed 5
        # keep one for new runs, and a burst queued behind it. Scaled polls, and tasks held at
        # once bounded for the worker's memory (ADR 0087).
        workflow_task_poller_behavior=workflow_pollers(settings.worker.workflow_task_pollers),
        max_concurrent_workflow_tasks=settings.worker.max_workflow_tasks,
        activities=[
            intake.validate_event, intake.count_duplicate, context.load_context,
            steps.record_step, steps.record_refusal,
            review.count_gate_inputs, review.open_review, review.notify_fallback_owner,
            review.gate_and_open_review, approval.approve_and_mint,
            tokens.mint_action_token, execute.execute_action, reconcile.lookup_write,
            reconcile.resend_write, reconcile.record_replay_end,
            reconcile.dead_letter_write, sweep.sweep_receipts, dead_letters.dead_letter_step,
            tagging.claim_tag_job, tagging.apply_item_tags, tagging.record_tag_failure,
            fanout.deliver_event, fanout.dead_letter_event, consumer_intake.control_core_event,
        ],
    )
    # Tagging jobs saved while Temporal was unreachable (docs/tagging.md): started from here,
    # so every main worker is also a relay; the workflow id makes racing relays one run.
    relay = asyncio.create_task(
        relay_loop(tagging_store, temporal_starter(client, settings.task_queue)))
    # /metrics when TOLLGATE_METRICS_PORT is set.
    exporter = start_exporter(pool, settings.observability)
    # One worker per target on the target's own queue: the server applies its rate limit to
    # the whole queue, whatever the number of worker processes (docs/deploy.md, scale-out).
    # The main queue keeps the same activities for runs started before that patch.
    per_target = [Worker(client, task_queue=target_task_queue(settings.task_queue, name),
                         activities=[execute.execute_action, reconcile.lookup_write,
                                     reconcile.resend_write],
                         max_task_queue_activities_per_second=rates.get(name),
                         interceptors=[ActivityContextInterceptor(watch)],
                         graceful_shutdown_timeout=drain, deployment_config=version)
                  for name in adapters]
    try:
        async with AsyncExitStack() as running:
            for target_worker in per_target:
                await running.enter_async_context(target_worker)
            await running.enter_async_context(worker)
            try:
                yield worker
            finally:
                # Every queue stops polling at once: one drain, not one per queue in turn.
                await asyncio.gather(*(w.shutdown() for w in (worker, *per_target)))
    finally:
        if exporter is not None:
            exporter.shutdown()
        relay.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await relay
        await crm.aclose()
        for adapter in adapters.values():
            await adapter.aclose()
        await watch.close()
        if bus is not None:
            await bus.close()
        await pool.close()


def workflow_pollers(most: int | None) -> PollerBehavior:
    """Scaled by the server's hints (1 to 100) unless a fixed maximum is configured."""
    return PollerBehaviorAutoscaling() if most is None else PollerBehaviorSimpleMaximum(most)


@asynccontextmanager
async def draft_worker(client: Client, settings: Settings, *,
                       drain: timedelta = timedelta(0)) -> AsyncIterator[Worker]:
    """The model worker: only the model activities (draft, triage, tags), on their own queue."""
    model_settings = settings.models.draft()
    provider = build_provider(model_settings)
    triager = triage_provider(model_settings)
    # Tagging asks the same configured model as drafting (ADR 0042), its call cut at 20 s.
    tagger = build_tag_provider(model_settings)
    drafts = DraftActivities(provider)
    triage = TriageActivities(triager)
    tags = TagModelActivities(tagger)
    worker = Worker(client, task_queue=DRAFT_TASK_QUEUE,
                    activities=[drafts.draft_message, triage.triage_message,
                                tags.suggest_tags],
                    interceptors=[ActivityContextInterceptor()],
                    graceful_shutdown_timeout=drain,
                    deployment_config=deployment_config(settings.worker))
    try:
        async with worker:
            yield worker
    finally:
        # Each provider holds its own SDK client and connection pool: closed once no activity
        # can use them (the worker has drained), not left to the garbage collector.
        await close_providers(provider, triager, tagger)


#: What a model-only worker must not hold: a prompt-injected model call then has nothing to reach.
DRAFT_WORKER_FORBIDDEN = ("DATABASE_URL", "TOLLGATE_CRM_URL", "TOLLGATE_MESSAGING_URL",
                          "TOLLGATE_HELPDESK_URL", "TOLLGATE_TENANTS_FILE",
                          "TOLLGATE_ACTION_TOKEN_KEY")


def check_draft_environment(settings: Settings) -> None:
    """Refuse to run the draft worker with a database URL or adapter credentials in reach."""
    held = [name for name in DRAFT_WORKER_FORBIDDEN if settings.source(name) == "env"]
    if held:
        raise SystemExit("the draft worker holds only the model key; remove from its "
                         f"environment: {', '.join(held)}")
