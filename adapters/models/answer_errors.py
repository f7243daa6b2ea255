"""What a model task raises when the answer is not one it can use, for every task and vendor
(drafts, triage, postmortems; the tag provider maps the same codes onto its own error).

    RetryableError
    └── UnreadableOutput   empty_output | truncated_output | unreadable_output  (retried; on the
                           last attempt the activity hands the raw text to a reviewer)
    RejectedError
    └── ModelRefused       model_refused: readable, but an answer that is not a draft. Not
                           retried: the same prompt gets the same refusal; a person should look.
    SecurityIncident
    └── ToolCallInOutput   tool_call: the model tried to act instead of propose
    InvalidInput
    └── DraftSchemaError   schema_invalid: readable JSON that breaks the contract (extra fields,
                           wrong types); ``findings`` say where

Every exception keeps the raw text on ``.raw`` (never in its message) for the redacted excerpt.
"""

from __future__ import annotations

from collections.abc import Callable

from contracts.errors import InvalidInput, RejectedError, RetryableError, SecurityIncident


class UnreadableOutput(RetryableError):
    def __init__(self, code: str, *, raw: str = "") -> None:
        self.raw = raw
        super().__init__(code)


class ModelRefused(RejectedError):
    def __init__(self, code: str = "model_refused", *, raw: str = "") -> None:
        self.raw = raw
        super().__init__(code)


class ToolCallInOutput(SecurityIncident):
    def __init__(self, code: str = "tool_call", *, raw: str = "") -> None:
        self.raw = raw
        super().__init__(code)


class DraftSchemaError(InvalidInput):
    def __init__(self, findings: list[str], *, raw: str = "") -> None:
        self.raw = raw
        self.findings = findings
        super().__init__("schema_invalid")


#: Builds the exception for an answer that is not one, from its code and raw text; the vendor
#: adapters raise through one so the tag provider can keep its own taxonomy.
Failure = Callable[[str, str], Exception]


def answer_failure(code: str, raw: str) -> Exception:
    """The model-task exception for a vendor adapter's non-answer: ``tool_call``,
    ``model_refused``, or an ``UnreadableOutput`` code."""
    if code == "tool_call":
        return ToolCallInOutput(raw=raw)
    if code == "model_refused":
        return ModelRefused(raw=raw)
    return UnreadableOutput(code, raw=raw)
