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
from pathlib import Path
from typing import Annotated

from pydantic import StringConstraints, ValidationError

from contracts.base import Frozen
from contracts.errors import DeadLetterError
from contracts.policy import EventType, PolicyRule, PolicySnapshot, TenantKey, Version

#: The released matrix files. Not ``policies/matrix/``: that would shadow this module's name.
VERSIONS_DIR = Path(__file__).parent / "versions"
#: The tenant key whose rules apply to every tenant without a rule of its own.
WILDCARD = "*"
_FILE_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})(?:\.([1-9]\d*))?\.json")


class PolicyMatrix(Frozen):
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
    match = _FILE_NAME.fullmatch(name)
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
