"""The incident packet (ADR 0046): rows PostgreSQL holds about a window, turned into redacted
items with stable refs, groups by error code and by code x policy version x prompt version,
and a timeline. Pure: the same rows always give the same packet, and so the same hash.

What enters: ids, codes, versions, states, times and counts. What never does: payloads, the
reasons and details people or targets typed, operator names. A value that does not look like an
identifier, or that looks like an e-mail address or a phone number, is replaced by
``[redacted]`` (``policies.redaction``), so a code that carries a customer's contact is dropped
rather than sent to a model.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from contracts.incident import IncidentPacket, PacketItem, TimelineEntry
from policies.redaction import personal_data_kind

REDACTED = "[redacted]"
_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}")
#: A dated version (``2026-12-02.1``, a policy's): its digits read like a phone number to the
#: personal-data check, and it is none.
_DATED = re.compile(r"\d{4}-\d{2}-\d{2}(?:\.\d{1,4})?")
#: Failures (what the groups count); switch changes and replays are responses to them.
_FAILURES = ("dead_letter", "unknown_write", "quarantine", "failed_validation")


def safe_id(value: object) -> str | None:
    """An identifier or code as it is, or ``[redacted]``; None stays None."""
    if value is None:
        return None
    text = str(value)
    if _DATED.fullmatch(text):
        return text
    if not _CODE.fullmatch(text) or personal_data_kind(text):
        return REDACTED
    return text


def _ref_part(value: str | None) -> str:
    """A code inside a ref: refs allow fewer characters than codes do."""
    return re.sub(r"[^A-Za-z0-9._\-]", "_", value or "-")


def _facts(**values: object) -> dict[str, str]:
    return {k: v for k, raw in values.items() if (v := safe_id(raw)) is not None}


def _dead_letter(r: Mapping[str, Any]) -> PacketItem:
    return PacketItem(
        ref=f"dl:{r['id']}", kind="dead_letter", at=r["at"], tenant_id=safe_id(r["tenant_id"]),
        code=safe_id(r["error_code"]), policy_version=safe_id(r["policy_version"]),
        prompt_version=safe_id(r["prompt_version"]),
        facts=_facts(workflow_id=r["workflow_id"], error_class=r["error_class"],
                     state=r["state"], status=r["status"]),
        figures={"id": int(r["id"]), "replays": int(r["replays"])})


def _unknown_write(r: Mapping[str, Any]) -> PacketItem:
    figures: dict[str, int | float] = {"id": int(r["id"])}
    if r["seconds"] is not None:
        figures["recovery_seconds"] = round(float(r["seconds"]), 1)
    return PacketItem(
        ref=f"uw:{r['id']}", kind="unknown_write", at=r["at"], tenant_id=safe_id(r["tenant_id"]),
        code=safe_id(r["error_code"] or "unknown_write"),
        policy_version=safe_id(r["policy_version"]), prompt_version=safe_id(r["prompt_version"]),
        facts=_facts(workflow_id=r["workflow_id"], adapter=r["adapter"],
                     state=r["outcome"] or "UNRESOLVED"),
        figures=figures)


def _switch(r: Mapping[str, Any]) -> PacketItem:
    circuit = r["actor"] == "circuit"
    figures = {k: int(r[k]) for k in ("count", "limit", "window_seconds", "canary")
               if r.get(k) is not None}
    return PacketItem(
        ref=f"{'cc' if circuit else 'ks'}:{r['id']}",
        kind="circuit_closure" if circuit else "kill_switch", at=r["at"],
        tenant_id=safe_id(r["tenant_id"]), code=safe_id(r["rule"] or r["action"]),
        policy_version=safe_id(r["policy_version"]),
        facts=_facts(adapter=r["adapter"], action=r["action"],
                     by="circuit" if circuit else "operator"),
        figures={"id": int(r["id"]), **figures})


def _quarantine(r: Mapping[str, Any]) -> PacketItem:
    return PacketItem(
        ref=f"q:reason:{_ref_part(safe_id(r['reason_code']))}", kind="quarantine",
        at=r["first_at"], code=safe_id(r["reason_code"]), figures={"count": int(r["n"])})


def _failed_validation(r: Mapping[str, Any]) -> PacketItem:
    return PacketItem(
        ref=f"fv:{r['event_row']}v{r['version']}", kind="failed_validation", at=r["at"],
        tenant_id=safe_id(r["tenant_id"]), code=safe_id(r["code"]),
        policy_version=safe_id(r["policy_version"]), prompt_version=safe_id(r["prompt_version"]),
        facts=_facts(workflow_id=r["workflow_id"], status=r["status"],
                     provider=r["provider"], model=r["model"]),
        figures={"draft_version": int(r["version"])})


def _replay(r: Mapping[str, Any]) -> PacketItem:
    figures = {"id": int(r["id"])}
    if r["dead_letter_id"] is not None:
        figures["dead_letter"] = int(r["dead_letter_id"])
    if r["replay"] is not None:
        figures["replay"] = int(r["replay"])
    return PacketItem(
        ref=f"rp:{r['id']}", kind="replay", at=r["at"], tenant_id=safe_id(r["tenant_id"]),
        code=safe_id(r["result"] or "started"), facts=_facts(action=r["action"]),
        figures=figures)


_BUILDERS = {"dead_letters": _dead_letter, "unknown_writes": _unknown_write,
             "switch_changes": _switch, "quarantines": _quarantine,
             "failed_validations": _failed_validation, "replays": _replay}


def _weight(item: PacketItem) -> int:
    """How many failures an item stands for: a quarantine item is a group of rows."""
    return int(item.figures["count"]) if item.kind == "quarantine" else 1


def _groups(evidence: list[PacketItem]) -> list[PacketItem]:
    by_code: dict[str, list[PacketItem]] = {}
    by_version: dict[tuple[str, str, str], list[PacketItem]] = {}
    for item in evidence:
        if item.kind not in _FAILURES:
            continue
        code = item.code or "-"
        by_code.setdefault(code, []).append(item)
        key = (code, item.policy_version or "-", item.prompt_version or "-")
        by_version.setdefault(key, []).append(item)
    groups = [PacketItem(ref=f"code:{_ref_part(code)}", kind="code_group", code=code,
                         refs=[i.ref for i in items],
                         figures={"count": sum(map(_weight, items))})
              for code, items in sorted(by_code.items())]
    groups += [PacketItem(ref=f"ver:{_ref_part(c)}|{_ref_part(p)}|{_ref_part(v)}",
                          kind="version_group", code=c, policy_version=p, prompt_version=v,
                          refs=[i.ref for i in items],
                          figures={"count": sum(map(_weight, items))})
               for (c, p, v), items in sorted(by_version.items())]
    return groups


def _totals(evidence: list[PacketItem], since: datetime, until: datetime) -> PacketItem:
    def n(kind: str) -> int:
        return sum(_weight(i) for i in evidence if i.kind == kind)

    recovered = sum(1 for i in evidence
                    if i.kind == "unknown_write" and i.facts.get("state") == "SUCCEEDED")
    window = {"since": since.isoformat(), "until": until.isoformat()}
    return PacketItem(ref="sum:window", kind="totals", facts=window, figures={
        "dead_letters": n("dead_letter"), "unknown_writes": n("unknown_write"),
        "unknown_writes_recovered": recovered, "circuit_closures": n("circuit_closure"),
        "kill_switch_changes": n("kill_switch"), "quarantined": n("quarantine"),
        "failed_validations": n("failed_validation"), "replays": n("replay"),
        "failures": sum(n(k) for k in _FAILURES)})


def build_packet(rows: Mapping[str, Iterable[Mapping[str, Any]]], *, since: datetime,
                 until: datetime, tenant: str | None) -> IncidentPacket:
    """The packet for ``rows`` (``adapters.postgres.incident.IncidentStore.evidence``)."""
    evidence = [build(r) for name, build in _BUILDERS.items() for r in rows.get(name, ())]
    evidence.sort(key=lambda i: (i.kind, i.ref))
    timeline = sorted((TimelineEntry(at=i.at, ref=i.ref, what=f"{i.kind} {i.code or '-'}")
                       for i in evidence if i.at is not None), key=lambda t: (t.at, t.ref))
    return IncidentPacket(since=since, until=until, tenant=safe_id(tenant) or "*",
                          items=[_totals(evidence, since, until), *_groups(evidence), *evidence],
                          timeline=timeline)


def packet_hash(packet: IncidentPacket) -> str:
    """sha256 of the packet's canonical JSON: what a stored draft is tied to."""
    text = json.dumps(packet.model_dump(mode="json"), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
