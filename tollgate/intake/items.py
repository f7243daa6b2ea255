"""Save an item, then start its tagging: the library behind ``tollgate items save`` and
``POST /v1/items`` (docs/tagging.md).

Order is the point: validate (``ItemCapture``), commit item + PENDING job in one transaction,
and only then start ``TagItemWorkflow``, so no worker ever sees an item id that is not
committed. A failed start never fails the save: the job row has no ``started_at`` yet, and the
relay (``relay_unstarted``, run by ``relay_loop`` beside the worker) starts it later. The save
never waits for the model.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from adapters.broker.cancel import raise_if_cancel_pending, raise_if_cancelled
from adapters.postgres.tagging import TaggingStore
from contracts.errors import InvalidInput
from contracts.tagging import ItemCapture, SavedItem, TagItemRequest, TagJob
from policies.keys import tag_workflow_id

log = structlog.get_logger("tollgate.items")

#: Starts the tagging run ``run`` of an item; raises when the start is not known durable.
Starter = Callable[[int, int], Awaitable[None]]

RELAY_EVERY_S = 5.0
#: The tagging workflow, by name (``workflows/tag_item.py``): its method reference brought the
#: tagging activities and the event pipeline's drafting into `tollgate items save`.
#: tests/test_workflow_names.py holds the name to the workflow's definition.
TAG_ITEM_WORKFLOW = "TagItemWorkflow"


def temporal_starter(client: Client, task_queue: str) -> Starter:
    """A ``Starter`` on Temporal. An id already started is a durable start, not an error: the
    relay and the save may race on one job, and the workflow id makes them one run."""

    async def start(item_id: int, run: int) -> None:
        with contextlib.suppress(WorkflowAlreadyStartedError):
            request = TagItemRequest(item_id=item_id, run=run)
            await client.start_workflow(
                TAG_ITEM_WORKFLOW, request,
                id=tag_workflow_id(item_id, run), task_queue=task_queue,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE)

    return start


class SaveRefused(Exception):
    """The caller holds none of the roles that may save (``TOLLGATE_ITEM_SAVE_ROLES``)."""


def check_save_roles(roles: tuple[str, ...], allowed: tuple[str, ...]) -> None:
    """Refuse a save unless one of ``roles`` may save; roles compare as the gate's do."""
    if not {r.strip().casefold() for r in roles} & {a.strip().casefold() for a in allowed}:
        raise SaveRefused(f"none of these roles may save items; allowed: {', '.join(allowed)}")


async def save_item(store: TaggingStore, start: Starter, capture: ItemCapture, *,
                    tenant: str) -> SavedItem:
    """Commit the item and its job for the user of ``tenant``, then try to start the tagging
    once. Saving again the same live URL returns the existing item and starts nothing (a
    re-save does not re-tag); another tenant's save of that URL is its own item.

    Raises:
        InvalidInput: a field holds text PostgreSQL cannot store (NUL, a lone surrogate).
    """
    for name in ("url", "title", "description", "text"):
        value: str = getattr(capture, name)
        if "\x00" in value or any("\ud800" <= c <= "\udfff" for c in value):
            raise InvalidInput("bad_text", f"{name}: holds a NUL or a lone surrogate")
    saved = await store.save_item(tenant, capture)
    if not saved.created:
        return saved
    started = await _try_start(store, start, saved.item_id, 1)
    return saved.model_copy(update={"started": started})


async def retry_failed(store: TaggingStore, start: Starter, *, tenant: str, user: str,
                       item_id: int) -> tuple[TagJob, bool]:
    """The owner's manual retry: FAILED -> PENDING as the next run (``TaggingStore.retry_job``
    refuses a stranger and any other state), then one try to start it; the relay starts it
    when Temporal is unreachable. Returns the job and whether the start is durable."""
    job = await store.retry_job(tenant, user, item_id)
    return job, await _try_start(store, start, item_id, job.runs)


async def relay_unstarted(store: TaggingStore, start: Starter, limit: int = 100) -> int:
    """Start every PENDING job whose start is not known durable; returns how many started."""
    started = 0
    for item_id, run in await store.unstarted(limit):
        if not await _try_start(store, start, item_id, run):
            break  # Temporal is down: the rest would fail the same way; try on the next pass
        started += 1
    return started


async def relay_loop(store: TaggingStore, start: Starter, every_s: float = RELAY_EVERY_S) -> None:
    """Run the relay until cancelled (``tollgate dev`` / the worker start it beside the worker)."""
    while True:
        raise_if_cancel_pending()  # a cancel a library swallowed (adapters/broker/cancel.py)
        try:
            await relay_unstarted(store, start)
        except Exception as exc:  # the store itself is down: say so, keep going
            raise_if_cancelled(exc)  # ... unless it was our cancel in a library's guise
            log.warning("tagging_relay_failed", error=type(exc).__name__)
        await asyncio.sleep(every_s)


async def _try_start(store: TaggingStore, start: Starter, item_id: int, run: int) -> bool:
    try:
        await start(item_id, run)
    except Exception as exc:  # never fail a save for a start; the relay will do it
        # A cancel of the caller that the Temporal SDK reported as its own error is no
        # deferred start: taken as one, the relay loop would sleep and go on, never ending.
        raise_if_cancelled(exc)
        log.warning("tagging_start_deferred", item_id=item_id, run=run,
                    error=type(exc).__name__)
        return False
    await store.mark_started(item_id, run)
    return True
