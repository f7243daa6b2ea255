"""The policy matrix: versioned data saying who may approve an action, and under which limits.

A release is one JSON file in ``policies/versions/``: ``YYYY-MM-DD.json`` holds version
``YYYY-MM-DD.1``, a second release on the same day is ``YYYY-MM-DD.2.json``. A released file is
never edited, because every decision and receipt is stamped with its version and must keep
meaning what that file said (docs/policy.md).

Only ``load_matrix`` (and ``newest_matrix_file``) touch the disk; an activity calls them and
hands the workflow the small frozen ``PolicySnapshot`` for one (tenant, event type). Everything
else here is pure, so workflows may import it.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    ValidationError,
    model_validator,
)

from policies.keys import EVENT_TYPE_PATTERN, ID_BODY
from workflows.errors import DeadLetterError

#: The released matrix files. Not ``policies/matrix/``: that would shadow this module's name.
VERSIONS_DIR = Path(__file__).parent / "versions"
#: The tenant key whose rules apply to every tenant without a rule of its own.
WILDCARD = "*"

# Weeks, days, hours, minutes, seconds only: years and months have no fixed length, and a bare
# number would leave the reader guessing whether it meant seconds or minutes.
_ISO_DURATION = re.compile(r"^P(?=\d|T\d)(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$")
_FILE_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:\.([1-9]\d*))?\.json$")


def _iso_duration(value: object) -> object:
    if isinstance(value, timedelta):
        return value
    if isinstance(value, str) and _ISO_DURATION.match(value):
        return value
    raise ValueError("must be an ISO-8601 duration string such as PT4H, P1D or PT1H30M")


def _positive(value: timedelta) -> timedelta:
    if value <= timedelta(0):
        raise ValueError("must be longer than zero")
    return value


#: A span of time, written in the JSON as an ISO-8601 duration ("PT4H"); pydantic writes it
#: back in the same form, so a snapshot survives Temporal's pydantic data converter unchanged.
Duration = Annotated[timedelta, BeforeValidator(_iso_duration), AfterValidator(_positive)]
Name = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
Owner = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@\-]{0,127}$")]
TenantKey = Annotated[str, StringConstraints(pattern=rf"^(\*|{ID_BODY})$")]
EventType = Annotated[str, StringConstraints(pattern=EVENT_TYPE_PATTERN)]
Version = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}\.[1-9]\d*$")]
Risk = Literal["low", "medium", "high"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PolicyRule(_Frozen):
    """What the policy says about one action for one (tenant, event type). Every field is
    required: a rule is read by auditors, so nothing in it is implied. Units in docs/policy.md."""

    approver_roles: Annotated[tuple[Name, ...], Field(min_length=1)]
    consent_required: StrictBool
    max_context_age: Duration
    max_messages_per_customer_per_day: Annotated[StrictInt, Field(ge=1)]
    separation_of_duties: StrictBool
    review_sla: Duration
    review_deadline: Duration
    fallback_owner: Owner
    risk: Risk
    max_info_rounds: Annotated[StrictInt, Field(ge=0, le=10)]
    backlog_limit: Annotated[StrictInt, Field(ge=1)]
    adapter: Name
    action: Name

    @model_validator(mode="after")
    def _consistent(self) -> PolicyRule:
        if len(set(self.approver_roles)) != len(self.approver_roles):
            raise ValueError("approver_roles lists a role twice")
        # The SLA escalates to the fallback owner; past the deadline the review expires. An SLA
        # at or past the deadline would expire a review nobody was ever escalated to.
        if self.review_deadline <= self.review_sla:
            raise ValueError("review_deadline must be longer than review_sla")
        return self


class PolicySnapshot(_Frozen):
    """The one rule a workflow needs, with the version to stamp on what it decides."""

    version: Version
    rule: PolicyRule


class PolicyMatrix(_Frozen):
    """A whole release: ``rules[tenant_id][event_type]``, with ``"*"`` as the tenant default."""

    version: Version
    description: Annotated[str, StringConstraints(max_length=2000)] = ""
    rules: dict[TenantKey, dict[EventType, PolicyRule]]

    def rule_for(self, tenant_id: str, event_type: str) -> PolicySnapshot | None:
        """The tenant's own rule for the event type, else the ``"*"`` rule, else None.

        The fallback is per event type: a tenant with rules for other event types still gets
        the default for this one. None means no policy covers the event, so nothing may be sent.
        """
        for key in (tenant_id, WILDCARD):
            rule = self.rules.get(key, {}).get(event_type)
            if rule is not None:
                return PolicySnapshot(version=self.version, rule=rule)
        return None


class PolicyMatrixError(DeadLetterError):
    """The matrix file is missing, misnamed or invalid. The message names the file and the
    field; no event can be decided until an operator releases a valid file."""


def _version_for(name: str) -> tuple[str, int] | None:
    match = _FILE_NAME.match(name)
    return (match[1], int(match[2] or 1)) if match else None


def newest_matrix_file(directory: Path = VERSIONS_DIR) -> Path:
    """The release with the highest version by file name (``2026-12-01.json`` beats
    ``2026-11-30.2.json``). A stray ``*.json`` with another name is an error, never skipped,
    so a misnamed release cannot silently lose to an older one."""
    files = sorted(directory.glob("*.json"))
    misnamed = [p.name for p in files if _version_for(p.name) is None]
    if misnamed:
        raise PolicyMatrixError(
            "policy_matrix_misnamed",
            f"{directory}: {', '.join(misnamed)} not named YYYY-MM-DD.json or YYYY-MM-DD.N.json",
        )
    if not files:
        raise PolicyMatrixError("policy_matrix_missing", f"{directory}: no policy matrix file")
    versions = [_version_for(p.name) for p in files]
    if len(set(versions)) != len(versions):
        raise PolicyMatrixError(
            "policy_matrix_misnamed", f"{directory}: two files name the same version"
        )
    return max(files, key=lambda p: _version_for(p.name) or ("", 0))


def load_matrix(path: Path | None = None) -> PolicyMatrix:
    """Read and validate one matrix file (the newest release when ``path`` is None).

    Call it from an activity or at worker start, never at import time or in a workflow.

    Raises:
        PolicyMatrixError: the file cannot be read, is not valid JSON, breaks the schema
            (the message lists each ``dotted.field.path: problem``), or its ``version`` does
            not match its file name.
    """
    path = newest_matrix_file() if path is None else path
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PolicyMatrixError("policy_matrix_missing", f"{path}: {exc.strerror}") from exc
    try:
        matrix = PolicyMatrix.model_validate_json(text)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in err['loc']) or '(file)'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        )
        raise PolicyMatrixError("policy_matrix_invalid", f"{path}: {problems}") from exc
    expected = _version_for(path.name)
    if expected is not None and matrix.version != f"{expected[0]}.{expected[1]}":
        raise PolicyMatrixError(
            "policy_matrix_invalid",
            f"{path}: version: {matrix.version!r} does not match the file name "
            f"(expected '{expected[0]}.{expected[1]}'); release a new file instead",
        )
    return matrix
