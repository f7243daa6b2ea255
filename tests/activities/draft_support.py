"""For the draft activity's tests: a clean draft, a provider that answers from a script, and the
activity run on a request."""

from __future__ import annotations

import dataclasses

from temporalio.testing import ActivityEnvironment

from activities.draft import DraftActivities
from activities.interceptor import activity_context
from adapters.models.draft_parsing import parse_draft
from adapters.ports.models import ModelAnswer
from contracts import DraftPrompt, DraftRequest, DraftResult
from contracts.errors import TollgateError

CLEAN = {
    "message": "Hi Lan, Miu's vaccination is due on 1 December 2026. Reply to book a visit.",
    "source_refs": ["crm.first_name", "crm.pet_name", "event.due_at"],
    "unknowns": [],
    "reason": "Due-date reminder.",
    "confidence": 0.9,
}


class ScriptedProvider:
    """A ``DraftProvider`` that answers from a script and counts its calls."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self, *answers: str | TollgateError) -> None:
        self._answers = list(answers)
        self.calls: list[DraftRequest] = []

    async def propose(self, prompt: DraftPrompt) -> ModelAnswer:
        self.calls.append(prompt.request)
        answer = self._answers.pop(0)
        if isinstance(answer, TollgateError):
            raise answer
        return ModelAnswer(draft=parse_draft(answer), raw=answer, model="scripted-1-0426")


async def run(provider: object, request: DraftRequest, attempt: int = 1) -> DraftResult:
    activities = DraftActivities(provider)  # type: ignore[arg-type]

    async def intercepted(request: DraftRequest) -> DraftResult:
        # What the worker's interceptor does around it; ActivityEnvironment takes none.
        with activity_context([request]):
            return await activities.draft_message(request)

    result: DraftResult = await env_at(attempt).run(intercepted, request)
    return result


def env_at(attempt: int) -> ActivityEnvironment:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, attempt=attempt)
    return env
