"""`tollgate review list` carries each waiting run's ticket (issue 33): the draft version in
the table and the ``--seen`` token in the JSON, read from the listing's search attributes, so a
decision made from the list is one update with no ``review_ticket`` query before it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome
from tests.conftest import fresh_key, signed_event, start, wait_review, worker_settings
from tests.eventually import eventually
from tests.review_queries import counting
from tollgate.cli.review_decide import review_decide
from tollgate.cli.review_list import review_list
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker


async def test_decision_from_the_list_needs_no_query(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    queue, tenant = f"tq-{uuid.uuid4().hex[:8]}", "acme"
    settings = worker_settings(database_url, standins, tmp_path, queue)
    customer = fresh_key("C")
    standins.crm.upsert(tenant, customer, first_name="Lan", pet_name="Miu",
                        consent_messaging=True)
    counted, queries = counting(dev_server.client)
    async with main_worker(dev_server.client, settings), \
            draft_worker(dev_server.client, settings):
        handle = await start(dev_server.client, queue, signed_event(customer))
        shown = await wait_review(handle)

        async def row() -> dict[str, object] | None:
            assert await review_list(dev_server.client, tenant=tenant, as_json=True) == 0
            out = capsys.readouterr().out  # the worker's log lines share stdout here
            rows, _ = json.JSONDecoder().raw_decode(out[out.index("\n[") + 1:]
                                                    if not out.startswith("[") else out)
            return next((r for r in rows if r["workflow_id"] == handle.id), None)

        listed = await eventually(row, f"{handle.id} listed with its ticket",
                                  until=lambda r: r is not None and r["seen"] is not None)
        assert listed is not None
        assert listed["seen"] == f"v{shown['draft_version']}:{shown['request_id']}"
        assert listed["draft_version"] == shown["draft_version"]
        assert await review_list(dev_server.client, tenant=tenant) == 0
        line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith(handle.id))
        assert f" v{shown['draft_version']} " in line

        version, request = str(listed["seen"])[1:].split(":", 1)
        code = await review_decide(
            counted, Settings.from_env({"DATABASE_URL": database_url}), handle.id,
            decision="approve", reviewer="an.tran", role="care_lead", reason="from the list",
            tenant=None, draft_version=int(version), request_id=request)
        assert code == 0, capsys.readouterr().out
        assert queries.names["review_ticket"] == 0
        outcome = await dev_server.client.get_workflow_handle(
            handle.id, result_type=FinalOutcome).result()
        assert outcome.state == EventState.SUCCEEDED
