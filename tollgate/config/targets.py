"""The targets section: where the CRM and messaging targets are, and what each one can do.

Per-target capabilities come from ``TOLLGATE_TARGETS``.

Whether a target can be looked up by key and whether it dedupes by key decide how an unknown
write is settled (docs/receipts.md), so they are declared by whoever runs the target, not
assumed by the adapter. The value is a JSON object keyed by adapter name::

    {"messaging": {"lookup": true, "dedupe": true}}

A target left out keeps its adapter's default (the messaging stand-in and service have both).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError, field_validator

from contracts import TargetCapabilities
from contracts.errors import InvalidInput
from tollgate.config.base import Section, env_field, whole_number

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


RATES_ENV_VAR = "TOLLGATE_TARGET_RATES"


def parse_rates(raw: str | None) -> dict[str, float]:
    """Read ``TOLLGATE_TARGET_RATES`` (``messaging=5,crm=20``: actions per second per target,
    across every worker); unset, empty or a target left out means no limit.

    Raises:
        InvalidInput: an entry is not ``name=number`` with a number above 0.
    """
    rates: dict[str, float] = {}
    for entry in (raw or "").split(","):
        if not entry.strip():
            continue
        name, sep, value = (part.strip() for part in entry.partition("="))
        try:
            rate = float(value) if sep and name else 0.0
        except ValueError:
            rate = 0.0
        if not rate > 0 or rate == float("inf"):
            raise InvalidInput("bad_target_rates", f"{RATES_ENV_VAR}: {entry.strip()!r} is not "
                               "target=actions-per-second with a number above 0")
        rates[name] = rate
    return rates


class TargetSettings(Section):
    """The outside systems a main worker acts on."""

    crm_url: str | None = env_field(
        "TOLLGATE_CRM_URL", None, "Base URL of the CRM (context source and lookups). Unset: the "
        "running `tollgate dev`'s stand-in.")
    messaging_url: str | None = env_field(
        "TOLLGATE_MESSAGING_URL", None, "Base URL of the messaging target. Unset: the running "
        "`tollgate dev`'s stand-in.")
    helpdesk_url: str | None = env_field(
        "TOLLGATE_HELPDESK_URL", None, "Base URL of the helpdesk target that triaged tickets "
        "are assigned at (docs/triage.md). Unset: the running `tollgate dev`'s stand-in; with "
        "neither, a main worker runs without it, warns at start (target_not_polled) and does "
        "not poll the helpdesk's task queue: triage assignments wait there, nothing sent, "
        "until a worker with it runs (docs/runbook.md).")
    capabilities: dict[str, TargetCapabilities] = env_field(
        ENV_VAR, {}, 'JSON object keyed by target name: {"messaging": {"lookup": true, '
        '"dedupe": true, "lookup_window_s": 20}}. A target left out keeps its adapter\'s '
        "defaults (docs/receipts.md).")
    rates: dict[str, float] = env_field(
        RATES_ENV_VAR, {}, "Actions per second per target across every worker, "
        "`messaging=5,crm=20`. A target left out: no limit.")
    connections: int = env_field(
        "TOLLGATE_TARGET_CONNECTIONS", 10, "Connections each worker process keeps to each target "
        "(CRM, messaging, helpdesk) at most; a call beyond them waits for one within its own "
        "timeout (a slow target's calls queue here instead of opening more connections).")

    @field_validator("connections", mode="before")
    @classmethod
    def _connections(cls, raw: Any) -> int:
        return whole_number(raw, "TOLLGATE_TARGET_CONNECTIONS", lowest=1, highest=1000)

    @field_validator("capabilities", mode="before")
    @classmethod
    def _parse_capabilities(cls, raw: Any) -> Any:
        return _one_line(parse_targets, raw) if isinstance(raw, str) else raw

    @field_validator("rates", mode="before")
    @classmethod
    def _parse_rates(cls, raw: Any) -> Any:
        return _one_line(parse_rates, raw) if isinstance(raw, str) else raw


def _one_line(parse: Any, raw: str) -> Any:
    try:
        return parse(raw)
    except InvalidInput as exc:
        raise ValueError(exc.message) from None
