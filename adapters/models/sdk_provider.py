"""What the two SDK-backed drafters (``anthropic.py``, ``openai.py``) do alike, kept in one place
so a new task or a change to the retry mapping reaches both: each task is one request whose text
the task's parser reads; the client is closed when its worker is done; an API error status maps
to the taxonomy the same way for every vendor. The wire (building the request, reading the
answer, the SDK's own exceptions) stays in each vendor's file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Protocol

from adapters.http.common import retry_after
from adapters.models.answer_errors import Failure, answer_failure
from adapters.models.draft_parsing import parse_draft
from adapters.models.postmortem_parsing import parse_postmortem
from adapters.models.triage_parsing import parse_triage
from adapters.ports.models import ModelAnswer, PostmortemAnswer, TokenUsage, TriageAnswer
from contracts import DraftPrompt
from contracts.errors import RateLimited, RejectedError, RetryableError
from contracts.incident import PostmortemPrompt

#: When a provider's 429 names no delay. Long enough not to hammer a limited key, short enough
#: for review. (The header itself is read by ``adapters.http.common.retry_after``.)
PROVIDER_RETRY_AFTER = 5.0


class _SdkClient(Protocol):
    async def close(self) -> None: ...


class SdkDraftProvider(ABC):
    """Drafts, triage and postmortems through a vendor SDK client built with
    ``max_retries=0`` (Temporal owns retries). A subclass builds ``_client`` and sends the
    request in ``_complete``.

    ``TIMEOUT`` and ``MAX_TOKENS`` are the call's budget where the constructor is given none
    (the tag providers' is smaller).
    """

    TIMEOUT, MAX_TOKENS = 30.0, 800
    model: str
    _client: _SdkClient

    async def aclose(self) -> None:
        """Close the SDK client's connections (the worker or command is done with it)."""
        await self._client.close()

    async def propose(self, prompt: DraftPrompt) -> ModelAnswer:
        raw, model, usage = await self._complete(prompt.system, prompt.user, prompt.json_schema,
                                                 "draft")
        return ModelAnswer(draft=parse_draft(raw), raw=raw, model=model, usage=usage)

    async def triage(self, prompt: DraftPrompt) -> TriageAnswer:
        """Triage one message (``policies.triage_prompt``, ADR 0044); raises as ``propose``."""
        raw, model, usage = await self._complete(prompt.system, prompt.user, prompt.json_schema,
                                                 "triage")
        return TriageAnswer(proposal=parse_triage(raw), raw=raw, model=model, usage=usage)

    async def postmortem(self, prompt: PostmortemPrompt) -> PostmortemAnswer:
        """Draft an incident postmortem (``policies.postmortem_prompt``, ADR 0046); raises as
        ``propose`` does."""
        raw, model, usage = await self._complete(prompt.system, prompt.user, prompt.json_schema,
                                                 "postmortem")
        return PostmortemAnswer(postmortem=parse_postmortem(raw), raw=raw, model=model,
                                usage=usage)

    @abstractmethod
    async def _complete(self, system: str, user: str, schema: dict[str, Any], name: str,
                        fail: Failure = answer_failure) -> tuple[str, str, TokenUsage | None]:
        """One request, the one every task sends (drafts, triage, postmortems, tags): the
        answer's text, the model that ran, its usage. Every outcome that is not a readable
        answer raises, as the vendor's module describes.

        Args:
            schema: the JSON schema of the answer.
            name: the task (``draft``, ``triage``, ``postmortem``, ``tags``), for a wire that
                names the schema it is sent.
            fail: builds the exception for a non-answer from its code and raw text; the tag
                providers pass their own. API errors are classified the same for every task.
        """


def status_failure(status: int, headers: Mapping[str, str]) -> Exception:
    """The taxonomy exception for an API error status, the same for every vendor."""
    if status == 429:
        return RateLimited("provider_429",
                           retry_after=retry_after(headers, default=PROVIDER_RETRY_AFTER))
    if status >= 500 or status in (408, 409):  # Anthropic's 529 "overloaded" included
        return RetryableError(f"provider_{status}")
    # 400 (our request or schema), 401/403 (key), 404 (model): repeating cannot help, and it is
    # the provider refusing us, not the event being invalid -> rejected (final), not quarantined.
    return RejectedError(f"provider_{status}")
