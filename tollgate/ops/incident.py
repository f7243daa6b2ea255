"""Incident summaries (issue 32 item 2, ADR 0046): read the window's evidence, build the redacted
packet, have the model draft a postmortem, keep it only when the validator finds nothing, and
store it with the packet's hash. A command path, not a workflow: ADR 0046 says why.

The model decides nothing here: its draft is refused whole on any finding (one line, exit 1,
nothing stored), and a stored draft stays ``DRAFT`` until an owner marks it reviewed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from adapters.ports.models import PostmortemProvider
from adapters.postgres.incident import IncidentStore
from contracts.errors import RetryableError, TollgateError
from contracts.incident import SECTIONS, IncidentPacket, Postmortem, PostmortemFinding
from policies.incident_packet import build_packet, packet_hash
from policies.postmortem import validate_postmortem
from policies.postmortem_prompt import build_postmortem_prompt
from tollgate.runtime.exits import Exit, Failure


@dataclass(frozen=True)
class Drafted:
    id: int
    new: bool
    packet: IncidentPacket
    packet_hash: str
    postmortem: Postmortem


def findings_line(findings: list[PostmortemFinding]) -> str:
    """The validator's refusal in one line: the first few findings, by code and place."""
    shown = [f"{f.code} ({f.section} {f.sentence}{': ' + f.what if f.what else ''})"
             for f in findings[:3]]
    more = f" and {len(findings) - 3} more" if len(findings) > 3 else ""
    return "; ".join(shown) + more


async def read_packet(pool: asyncpg.Pool, *, since: datetime, until: datetime,
                      tenant: str | None) -> IncidentPacket:
    rows = await IncidentStore(pool).evidence(since, until, tenant)
    return build_packet(rows, since=since, until=until, tenant=tenant)


async def draft_incident(pool: asyncpg.Pool, provider: PostmortemProvider, *, since: datetime,
                         until: datetime, tenant: str | None) -> Drafted:
    """Build, draft, validate, store. Raises ``Failure`` (one line) when the model does not
    answer (exit 3) or its draft is refused (exit 1)."""
    packet = await read_packet(pool, since=since, until=until, tenant=tenant)
    prompt = build_postmortem_prompt(packet)
    try:
        answer = await provider.postmortem(prompt)
    except RetryableError as exc:  # timeouts, 5xx, 429, an unreadable answer: try again later
        raise Failure(Exit.UNREACHABLE, f"the model gave no usable answer: {exc.code} "
                      f"({provider.name}); try again, or use the offline provider") from None
    except TollgateError as exc:  # a refusal, a tool call, a 4xx, an answer off the schema
        raise Failure(Exit.REFUSED, f"refused: the model's answer: {exc.code} "
                      f"({provider.name})") from None
    findings = validate_postmortem(answer.postmortem, packet)
    if findings:
        raise Failure(Exit.REFUSED, f"refused: the draft does not rest on the packet: "
                      f"{findings_line(findings)}")
    digest = packet_hash(packet)
    draft_id, new = await IncidentStore(pool).save_draft(
        tenant=packet.tenant, since=since, until=until, packet_hash=digest,
        packet=packet.model_dump(mode="json"), draft=answer.postmortem.model_dump(mode="json"),
        provider=provider.name, model=answer.model, prompt_version=prompt.prompt_version)
    return Drafted(draft_id, new, packet, digest, answer.postmortem)


def check_stored(row: dict[str, Any]) -> tuple[bool, list[PostmortemFinding]]:
    """Does a stored draft still match its hash, and does the validator still accept it?"""
    packet = IncidentPacket.model_validate(row["packet"])
    draft = Postmortem.model_validate(row["draft"])
    return packet_hash(packet) == row["packet_hash"], validate_postmortem(draft, packet)


_TITLES = {"impact": "Impact", "timeline": "Timeline", "suspected_cause": "Suspected cause",
           "open_items": "Open items"}


def markdown(row: dict[str, Any]) -> str:
    """A stored draft as markdown: the header, then each section's sentences with their refs."""
    intact, findings = check_stored(row)
    draft = Postmortem.model_validate(row["draft"])
    verdict = "accepts every sentence" if not findings else findings_line(findings)
    lines = [f"# Incident draft {row['id']} ({row['status']})", "",
             f"- window: {row['since']:%Y-%m-%d %H:%M:%S} to {row['until']:%Y-%m-%d %H:%M:%S} "
             f"UTC, tenant {row['tenant_id']}",
             f"- packet sha256: {row['packet_hash']} "
             f"({'intact' if intact else 'DOES NOT MATCH the stored packet'})",
             f"- drafted by: {row['provider']} {row['model']}, prompt {row['prompt_version']}",
             f"- validator: {verdict}",
             f"- reviewed: {row['reviewed_by'] or 'not yet'}"
             + (f" at {row['reviewed_at']:%Y-%m-%d %H:%M:%S} UTC" if row['reviewed_at'] else "")]
    for section in SECTIONS:
        lines += ["", f"## {_TITLES[section]}", ""]
        lines += [f"- {s.text} " + " ".join(f"[{r}]" for r in s.refs)
                  for s in getattr(draft, section)]
    return "\n".join(lines)
