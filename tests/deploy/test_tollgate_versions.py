"""Tollgate's own workers on worker deployment versions (issue 13, item 6), on the dev server with
the real ``tollgate.runtime.workers`` assembly: an event waiting for review on build b1 finishes
on b1 after b2 became current, while a new event goes to b2. Unset, the workers run unversioned."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.common import VersioningBehavior
from temporalio.testing import WorkflowEnvironment

from adapters.broker.cancel import within
from contracts import EventState, ReviewDecision
from tests.conftest import Handle, fresh_key, signed_event, start, wait_review, worker_settings
from tests.deploy.worker_versions_support import make_current, pinned_to
from tollgate.config.settings import Settings
from tollgate.config.worker import WorkerSettings
from tollgate.dev.standins import StandIns
from tollgate.runtime.deployment import deployment_config as deployment_config_of
from tollgate.runtime.workers import MAIN_WORKFLOWS, draft_worker, main_worker
from workflows.versioned import VERSIONED_WORKFLOWS


def deployment_config(env: dict[str, str]):  # type: ignore[no-untyped-def]
    return deployment_config_of(WorkerSettings.from_env(env))


def versioned(settings: Settings, deployment: str, build_id: str) -> Settings:
    return Settings.from_env({**settings.env, "TOLLGATE_DEPLOYMENT_NAME": deployment,
                              "TOLLGATE_BUILD_ID": build_id})


async def built_by(handle: Handle) -> set[str]:
    """The build ids of the workers that completed this run's workflow tasks."""
    return {e.workflow_task_completed_event_attributes.deployment_version.build_id
            async for e in handle.fetch_history_events()
            if e.HasField("workflow_task_completed_event_attributes")}


def customer(standins: StandIns) -> str:
    made = fresh_key("V")
    standins.crm.upsert("acme", made, first_name="Lan", pet_name="Miu", consent_messaging=True)
    return made


async def approve(handle: Handle) -> None:
    ticket = await wait_review(handle)
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="lan.nguyen",
        role="care_lead", reason="ok", draft_version=ticket["draft_version"]))


async def test_a_waiting_review_finishes_on_its_build_while_new_events_take_the_new(
    dev_server: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path
) -> None:
    client = dev_server.client
    queue, deployment = f"tq-{uuid.uuid4().hex[:8]}", f"tollgate-{uuid.uuid4().hex[:6]}"
    base = worker_settings(database_url, standins, tmp_path, queue)
    b1, b2 = versioned(base, deployment, "b1"), versioned(base, deployment, "b2")
    async with main_worker(client, b1), draft_worker(client, b1):
        await make_current(client, deployment, "b1", queue)
        old = await start(client, queue, signed_event(customer(standins)))
        await wait_review(old)  # pinned to b1 since its first task
        async with main_worker(client, b2), draft_worker(client, b2):
            await make_current(client, deployment, "b2", queue)
            new = await start(client, queue, signed_event(customer(standins)))
            await asyncio.gather(approve(old), approve(new))
            outcomes = await within(asyncio.gather(old.result(), new.result()), 60)
    assert [o.state for o in outcomes] == [EventState.SUCCEEDED, EventState.SUCCEEDED]
    assert (await pinned_to(old), await pinned_to(new)) == ("b1", "b2")
    # Not only recorded as pinned: every workflow task of each run ran on its own build.
    assert (await built_by(old), await built_by(new)) == ({"b1"}, {"b2"})


def test_unset_runs_unversioned_and_half_set_is_one_clear_line() -> None:
    assert deployment_config({}) is None
    assert deployment_config({"TOLLGATE_DEPLOYMENT_NAME": "", "TOLLGATE_BUILD_ID": " "}) is None
    config = deployment_config({"TOLLGATE_DEPLOYMENT_NAME": "tollgate",
                                "TOLLGATE_BUILD_ID": "0.2.0"})
    assert config is not None and config.use_worker_versioning
    assert (config.version.deployment_name, config.version.build_id) == ("tollgate", "0.2.0")
    with pytest.raises(SystemExit, match="TOLLGATE_BUILD_ID is not set"):
        deployment_config({"TOLLGATE_DEPLOYMENT_NAME": "tollgate"})


def test_a_versioned_worker_runs_every_type_an_unversioned_one_does() -> None:
    def names(types: list[type]) -> list[str | None]:
        return sorted(workflow._Definition.must_from_class(t).name or "" for t in types)

    assert names(VERSIONED_WORKFLOWS) == names(MAIN_WORKFLOWS)
    for t in VERSIONED_WORKFLOWS:
        assert workflow._Definition.must_from_class(t).versioning_behavior in (
            VersioningBehavior.PINNED, VersioningBehavior.AUTO_UPGRADE), t
