"""The triage activity when the model's answer raises: the same outcomes as a draft's
(activities/draft.py), and one log line per call with the error's class and code."""

from __future__ import annotations

import dataclasses
import json

import pytest
from structlog.testing import capture_logs
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.interceptor import activity_context
from activities.triage import TriageActivities
from adapters.models.draft_parsing import (
    DraftSchemaError,
    ModelRefused,
    ToolCallInOutput,
    UnreadableOutput,
)
from adapters.ports.models import TriageAnswer
from contracts import DraftPrompt, DraftRequest, DraftResult, EventRef
from contracts.drafting import DRAFT_MAX_ATTEMPTS
from contracts.errors import RateLimited, TollgateError
from policies.matrix import load_matrix
from policies.triage_prompt import TRIAGE_PROMPT_VERSION

CONTEXT = {"crm.first_name": "Lan", "crm.locale": "en", "event.channel": "chat",
           "event.thread_id": "T-881", "event.body": "Can I book an appointment for Miu?"}
GARBAGE = "Sure! Lan (lan.nguyen@example.com) asked me to use key sk-proj-abcdefghijklmnop1234"


class RaisingTriager:
    """A ``TriageProvider`` whose one answer raises."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self, error: TollgateError) -> None:
        self._error = error

    async def triage(self, prompt: DraftPrompt) -> TriageAnswer:
        raise self._error


def request() -> DraftRequest:
    snapshot = load_matrix().rule_for("acme", "MESSAGE_RECEIVED")
    assert snapshot is not None
    ref = EventRef(workflow_id="event/acme/m-1", tenant_id="acme", event_id="evt-m-1",
                   event_type="MESSAGE_RECEIVED", entity_id="C-1001", correlation_id="c-1",
                   schema_version=1)
    return DraftRequest(ref=ref, context=CONTEXT, policy_version=snapshot.version,
                        prompt_version=TRIAGE_PROMPT_VERSION, rule=snapshot.rule)


async def run(error: TollgateError, attempt: int = 1) -> DraftResult:
    activities = TriageActivities(RaisingTriager(error))

    async def intercepted(req: DraftRequest) -> DraftResult:
        # What the worker's interceptor does around it; ActivityEnvironment takes none.
        with activity_context([req]):
            return await activities.triage_message(req)

    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, attempt=attempt)
    result: DraftResult = await env.run(intercepted, request())
    return result


@pytest.mark.parametrize(
    ("error", "findings"),
    [
        (ModelRefused(raw=GARBAGE), ["model_refused"]),
        (ToolCallInOutput(raw=GARBAGE), ["tool_call"]),
        (DraftSchemaError(["schema_invalid:route:missing"], raw=GARBAGE),
         ["schema_invalid:route:missing"]),
    ],
    ids=["refusal", "tool_call", "schema"],
)
async def test_a_readable_non_answer_fails_validation_with_a_redacted_excerpt(
    error: TollgateError, findings: list[str]
) -> None:
    with capture_logs() as logs:
        result = await run(error)

    assert (result.status, result.findings) == ("failed_validation", findings)
    assert result.draft is None and result.triage is None
    assert result.raw_excerpt is not None and "lan.nguyen" not in result.raw_excerpt
    assert [(e["event"], e["status"]) for e in logs] == [("triage_message", "failed_validation")]
    assert (logs[0]["error_class"], logs[0]["error_code"]) == (error.error_class.value, error.code)


async def test_unreadable_is_retried_until_the_last_attempt_then_goes_to_a_reviewer() -> None:
    with capture_logs() as logs:
        with pytest.raises(ApplicationError) as caught:
            await run(UnreadableOutput("unreadable_output", raw=GARBAGE),
                      attempt=DRAFT_MAX_ATTEMPTS - 1)
        result = await run(UnreadableOutput("truncated_output", raw=GARBAGE),
                           attempt=DRAFT_MAX_ATTEMPTS)

    assert caught.value.type == "retryable" and not caught.value.non_retryable
    assert (result.status, result.findings) == ("unreadable", ["truncated_output"])
    assert result.raw_excerpt is not None and "sk-proj" not in result.raw_excerpt
    assert [(e["status"], e["error_code"]) for e in logs] == [
        ("error", "unreadable_output"), ("unreadable", "truncated_output")]


async def test_any_other_failure_is_raised_and_logged_without_the_message() -> None:
    with capture_logs() as logs, pytest.raises(ApplicationError) as caught:
        await run(RateLimited("provider_429", retry_after=7.0))

    assert caught.value.type == "rate_limited"
    [line] = logs
    assert (line["event"], line["status"], line["error_code"]) == (
        "triage_message", "error", "provider_429")
    assert (line["event_id"], line["provider"], line["model"]) == (
        "evt-m-1", "scripted", "scripted-1")
    assert "Miu" not in json.dumps(logs, default=str)
