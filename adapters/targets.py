"""Per-target capabilities from configuration: ``TOLLGATE_TARGETS``.

Whether a target can be looked up by key and whether it dedupes by key decide how an unknown
write is settled (docs/receipts.md), so they are declared by whoever runs the target, not
assumed by the adapter. The value is a JSON object keyed by adapter name::

    {"messaging": {"lookup": true, "dedupe": true}}

A target left out keeps its adapter's default (the messaging stand-in and service have both).
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from contracts import TargetCapabilities
from contracts.errors import InvalidInput

ENV_VAR = "TOLLGATE_TARGETS"


def parse_targets(raw: str | None) -> dict[str, TargetCapabilities]:
    """Read ``TOLLGATE_TARGETS``; empty or unset means every adapter's default.

    Raises:
        InvalidInput: the value is not a JSON object of ``{"lookup": bool, "dedupe": bool}``
            entries; the message names the first problem in one line.
    """
    if not raw or not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        raise InvalidInput("bad_targets", f"{ENV_VAR} is not valid JSON") from None
    if not isinstance(data, dict):
        raise InvalidInput("bad_targets", f"{ENV_VAR} must be a JSON object keyed by target name")
    targets: dict[str, TargetCapabilities] = {}
    for name, entry in data.items():
        try:
            targets[name] = TargetCapabilities.model_validate(entry, strict=True)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "entry"
            raise InvalidInput(
                "bad_targets",
                f"{ENV_VAR}: target {name!r}: {where}: {first['msg'].lower()}",
            ) from None
    return targets
