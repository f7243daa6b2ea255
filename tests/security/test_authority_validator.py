"""The review update's validator re-checks the decision's token, so a client that talks to
Temporal directly cannot decide as someone else (ADR 0026). Real workflow, activities and
PostgreSQL on the time-skipping server; the worker process holds the dev verifier."""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, ReviewAck, ReviewDecision
from policies.decision_identity import install_verifier
from tests.conftest import Handle, signed_event, start, wait_review
from tests.workflows.review_helpers import new_customer, refusals, sent_to
from tollgate.cli.common import run_in_loop
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns
from tollgate.runtime.identity import issue_dev_token, verifier_from_settings

review_cli = importlib.import_module("tollgate.cli.review_decide")


@pytest.fixture
def state(tmp_path: Path) -> Iterator[Path]:
    """The dev key of this test, installed as the worker process's decision verifier."""
    folder = tmp_path / "identity"
    verifier = verifier_from_settings(Settings.from_env({"TOLLGATE_STATE_DIR": str(folder)}))
    install_verifier(verifier.verify_cached)
    yield folder
    install_verifier(None)


async def both_clocks(env: WorkflowEnvironment) -> float:
    """The later of wall time (the CLI checks a token with it) and the test server's time (the
    validator checks it with ``workflow.now()``, and this server skips years ahead once a test
    awaits a result). On a real server the two agree; here a token is made fresh on both, so a
    refusal is for the reason under test, never for the skipped clock (ADR 0026)."""
    return max(time.time(), (await env.get_current_time()).timestamp())


def token(state: Path, reviewer: str = "an.tran", *, at: float, ttl_s: int = 3600,
          **kw: Any) -> str:
    """A dev token that expires ``ttl_s`` after ``at`` (``both_clocks``)."""
    return issue_dev_token(state, reviewer=reviewer, role=kw.pop("role", "care_lead"),
                           tenant=kw.pop("tenant", "acme"), extra={"exp": int(at) + ttl_s},
                           **kw)


def decision(ticket: dict[str, Any], **fields: Any) -> ReviewDecision:
    made: dict[str, Any] = dict(request_id=ticket["request_id"], decision="approve",
                                reviewer="an.tran", role="care_lead", reason="checked",
                                draft_version=ticket["draft_version"], tenant_id="acme")
    return ReviewDecision(**{**made, **fields})


async def rejected(handle: Handle, made: ReviewDecision) -> str:
    with pytest.raises(WorkflowUpdateFailedError) as caught:
        await handle.execute_update("review", made, result_type=ReviewAck)
    assert isinstance(caught.value.cause, ApplicationError)
    return str(caught.value.cause.type)


async def test_claimed_forged_and_service_identities_never_decide(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str, state: Path,
    tmp_path: Path, env: WorkflowEnvironment,
) -> None:
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    ticket = await wait_review(handle)
    at = await both_clocks(env)
    attempts = {
        "missing_token": decision(ticket),  # a claimed reviewer, as the old CLI sent it
        "identity_mismatch": decision(ticket, token=token(state, "mallory", at=at)),
        "bad_token": decision(ticket, token=token(tmp_path / "other-key", at=at)),
        "token_expired": decision(ticket, token=token(state, at=at, ttl_s=-60)),
        "role_not_in_token": decision(ticket, token=token(state, at=at, role="intern")),
        "service_account": decision(ticket, token=token(state, at=at, roles=("service",))),
    }
    for code, made in attempts.items():
        assert await rejected(handle, made) == code, code
    # Refused by the validator: nothing reached history, the review is still open, nothing sent.
    assert await handle.query("state") == EventState.AWAITING_REVIEW
    assert await refusals(database_url, handle.id) == []
    assert sent_to(standins, customer) == 0

    ack = await handle.execute_update("review", decision(ticket, token=token(state, at=at)),
                                      result_type=ReviewAck)
    assert ack.accepted, ack.message
    assert (await handle.result()).state == EventState.SUCCEEDED
    assert sent_to(standins, customer) == 1


async def test_the_cli_with_another_tenants_token_is_refused_and_recorded(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str, state: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    env: WorkflowEnvironment,
) -> None:
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    ticket = await wait_review(handle)

    async def connect(_: Settings) -> Client:
        return client

    monkeypatch.setattr(review_cli, "connect", connect)
    globex = token(state, "lan.nguyen", at=await both_clocks(env), tenant="globex")
    work = review_cli.approve.main(
        [handle.id, "--seen", f"v{ticket['draft_version']}:{ticket['request_id']}",
         "--reason", "ok", "--token", globex], standalone_mode=False)
    s = Settings.from_env({"TOLLGATE_STATE_DIR": str(state), "DATABASE_URL": database_url})
    assert await run_in_loop(work, s) == 1
    assert "refused: cross_tenant" in capsys.readouterr().out
    assert await refusals(database_url, handle.id) == ["cross_tenant"]
    assert await handle.query("state") == EventState.AWAITING_REVIEW
    await handle.terminate("test over")
