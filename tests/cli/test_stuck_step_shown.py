"""Issue 25: "a recording step that keeps failing shows in ops status", through the real
pipeline. PostgreSQL is made to refuse the review's opening (a trigger on its transition), so
the review's opening (`gate_and_open_review` in a one-marker-shape run, ADR 0053) fails on
every try and the event stays where it was (CONTEXT_READY: the opening writes DRAFTED and
AWAITING_REVIEW in one statement); `ops status` names the step and
the event and exits 6; once PostgreSQL takes the row again the review opens and the sign goes."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg
from temporalio.client import Client

from contracts import EventState
from tests.cli.helpers import base_env, tollgate
from tests.conftest import fresh_key, signed_event, start, wait_review
from tests.eventually import eventually
from tollgate.dev.standins import StandIns
from tollgate.runtime.exits import Exit

#: The step that opens a review: the gate's counts and the opening in one local activity.
OPENING = "gate_and_open_review"
REFUSE_REVIEWS = """
CREATE FUNCTION refuse_reviews() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'review rows refused for this test'; END $$;
CREATE TRIGGER refuse_reviews BEFORE INSERT ON state_transitions FOR EACH ROW
    WHEN (NEW.to_state = 'AWAITING_REVIEW') EXECUTE FUNCTION refuse_reviews();
"""


def status(database_url: str, tmp_path: Path, temporal: str, queue: str
           ) -> tuple[int, dict[str, object]]:
    # The workers' Temporal and queue: with Temporal unreachable, the open event alone would
    # need a human.
    said = tollgate("ops", "status", "--json", "--max-open-minutes", "600",
                    env=base_env(tmp_path, DATABASE_URL=database_url,
                                 TEMPORAL_ADDRESS=temporal, TOLLGATE_TASK_QUEUE=queue))
    assert said.clean(), said.text
    return said.code, json.loads(said.out)


async def test_a_review_that_cannot_be_recorded_shows_until_it_can(
    worker_client: tuple[Client, str], standins: StandIns, pool: asyncpg.Pool,
    database_url: str, tmp_path: Path,
) -> None:
    client, queue = worker_client
    temporal = client.service_client.config.target_host
    customer = fresh_key("C")
    standins.crm.upsert("acme", customer, first_name="Lan", consent_messaging=True)
    await pool.execute(REFUSE_REVIEWS)
    try:
        handle = await start(client, queue, signed_event(customer))

        async def failing_tries() -> int:
            return int(await pool.fetchval(
                "SELECT coalesce(max(attempts), 0) FROM failing_steps"
                " WHERE workflow_id = $1 AND step = $2", handle.id, OPENING) or 0)

        await eventually(failing_tries, f"{OPENING} recorded as failing")
        code, report = status(database_url, tmp_path, temporal, queue)
        assert code == Exit.ATTENTION
        failing = report["failing_steps"]
        assert isinstance(failing, dict)
        assert failing["by_step"] == {OPENING: 1}
        assert failing["oldest"]["workflow_id"] == handle.id
        assert failing["oldest"]["error_class"] == "unclassified"
        assert await pool.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                                   handle.id) == EventState.CONTEXT_READY.value
    finally:
        await pool.execute("DROP TRIGGER refuse_reviews ON state_transitions;"
                           " DROP FUNCTION refuse_reviews()")
    await wait_review(handle)  # the next try opens the review
    assert await failing_tries() == 0
    code, report = status(database_url, tmp_path, temporal, queue)
    assert report["failing_steps"] == {"count": 0, "by_step": {}, "oldest": None}
    assert code == Exit.OK, report["needs_a_human"]
