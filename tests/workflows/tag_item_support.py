"""For the tagging workflow's tests and recordings: a scripted tagger, its answer, and a run's
result."""

from __future__ import annotations

import json
from typing import Any

from temporalio.api.testservice.v1 import LockTimeSkippingRequest, UnlockTimeSkippingRequest
from temporalio.client import Client

from adapters.ports.models import TagReply
from contracts.tagging import TagItemResult, TagPrompt
from policies.keys import tag_workflow_id

ANSWER = json.dumps({"tags": [{"tag": "Thiết kế UI", "confidence": 0.9},
                              {"tag": "Figma", "confidence": 0.8}]})


class ScriptedTagger:
    """Answers from a script, one entry per call; the last entry repeats."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self) -> None:
        self.script: list[str | Exception] = []
        self.calls = 0

    async def suggest_tags(self, prompt: TagPrompt) -> TagReply:
        answer = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        if isinstance(answer, Exception):
            raise answer
        return TagReply(raw=answer, model=self.model)


async def result(client: Client, item_id: int, run: int = 1) -> dict[str, Any]:
    handle = client.get_workflow_handle(tag_workflow_id(item_id, run),
                                        result_type=TagItemResult)
    # A handle from get_workflow_handle does not skip time on its own: unlock skipping while we
    # wait, so the job's backoff timers pass in an instant (as for a started handle).
    await client.test_service.unlock_time_skipping(UnlockTimeSkippingRequest())
    try:
        out: TagItemResult = await handle.result()
    finally:
        await client.test_service.lock_time_skipping(LockTimeSkippingRequest())
    return out.model_dump(mode="json")
