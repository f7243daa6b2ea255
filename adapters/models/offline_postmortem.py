"""The offline postmortem (ADR 0046): the default when no model key is set. No network, no
clock: the same packet always gives the same draft, written from the packet's items (never
from the prompt's prose), every sentence citing the items whose figures it states.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from adapters.models.offline import OFFLINE_MODEL
from adapters.ports.models import PostmortemAnswer
from contracts.incident import (
    IncidentPacket,
    PacketItem,
    Postmortem,
    PostmortemPrompt,
    PostmortemSentence,
)

OFFLINE_POSTMORTEM_MODEL = f"{OFFLINE_MODEL}+postmortem-v1"
#: How many lines the offline timeline and the cause section list at most.
TIMELINE_LINES = 40
TOP_GROUPS = 5
#: Version pairs the cause section lists, largest first (comparing versions is its point).
CAUSE_GROUPS = 10


def _s(text: str, *refs: str) -> PostmortemSentence:
    return PostmortemSentence(text=text, refs=list(refs))


def _n(count: object, noun: str) -> str:
    """``1 dead letter``, ``2 dead letters``: the draft is read by people (it said "1
    failures"). Digits always, never words: the validator reads every number a sentence
    states, so the figure stays the one the packet holds."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _time(at: datetime | None) -> str:
    return f"{at:%Y-%m-%d %H:%M:%S} UTC" if at else "an unknown time"


def _of(packet: IncidentPacket, kind: str) -> list[PacketItem]:
    return [i for i in packet.items if i.kind == kind]


def _impact(total: PacketItem, codes: list[PacketItem]) -> list[PostmortemSentence]:
    f = total.figures
    out = [_s(f"Between {total.facts['since']} and {total.facts['until']} the packet holds "
              f"{_n(f['failures'], 'failure')}: {_n(f['dead_letters'], 'dead letter')}, "
              f"{_n(f['unknown_writes'], 'unknown write')} ({f['unknown_writes_recovered']} "
              f"recovered by lookup), {_n(f['quarantined'], 'quarantined event')} and "
              f"{_n(f['failed_validations'], 'refused draft')}.", total.ref),
           _s(f"Operators and the circuit responded with "
              f"{_n(f['circuit_closures'], 'circuit closure')}, "
              f"{_n(f['kill_switch_changes'], 'kill switch change')} by operators and "
              f"{_n(f['replays'], 'dead-letter replay step')}.", total.ref)]
    top = sorted(codes, key=lambda g: (-g.figures["count"], g.ref))[:TOP_GROUPS]
    out += [_s(f"Error code {g.code} accounts for {g.figures['count']} of them.", g.ref)
            for g in top]
    return out


def _event(item: PacketItem) -> str:
    facts, code = item.facts, item.code or "-"
    if item.kind == "unknown_write":
        took = item.figures.get("recovery_seconds")
        end = (f"ended {facts.get('state')} after {took} s" if took is not None
               else "has no recorded outcome")
        return f"an unknown write at {facts.get('adapter', '-')} ({code}) {end}"
    if item.kind == "circuit_closure":
        return (f"the circuit closed {facts.get('adapter', '-')}/{item.tenant_id} on rule "
                f"{code} after {_n(item.figures.get('count'), 'signal')} "
                f"(limit {item.figures.get('limit')})")
    if item.kind == "kill_switch":
        return (f"an operator's {facts.get('action', '-')} of the switch "
                f"{facts.get('adapter', '-')}/{item.tenant_id}")
    if item.kind == "quarantine":
        n = item.figures["count"]
        return (f"an event quarantined as {code}" if n == 1
                else f"the first of {n} events quarantined as {code}")
    if item.kind == "replay":
        return f"a replay step of a dead letter ({code})"
    if item.kind == "failed_validation":
        return f"the validator refused a draft ({code})"
    return f"dead letter {item.figures.get('id')} ({item.facts.get('error_class', '-')}/{code})"


def _timeline(packet: IncidentPacket, total: PacketItem) -> list[PostmortemSentence]:
    items = {i.ref: i for i in packet.items}
    out = [_s(f"{_time(t.at)}: {_event(items[t.ref])}.", t.ref)
           for t in packet.timeline[:TIMELINE_LINES]]
    return out or [_s("Nothing was recorded in the window.", total.ref)]


def _cause(packet: IncidentPacket, total: PacketItem) -> list[PostmortemSentence]:
    versions = sorted(_of(packet, "version_group"), key=lambda g: (-g.figures["count"], g.ref))
    out = [_s(f"Code {g.code} under policy {g.policy_version} and prompt {g.prompt_version}: "
              f"{_n(g.figures['count'], 'failure')}.", g.ref) for g in versions[:CAUSE_GROUPS]]
    for code in _of(packet, "code_group"):
        split = [g for g in versions if g.code == code.code]
        if len(split) > 1:
            out.append(_s(f"Code {code.code} shows under more than one version pair, so a "
                          "version change alone does not explain it.", code.ref,
                          *(g.ref for g in split)))
    out += [_s(f"The circuit's rule {c.code} closed {c.facts.get('adapter', '-')}/"
               f"{c.tenant_id}: the target misbehaved, not a single event.", c.ref)
            for c in _of(packet, "circuit_closure")]
    return out or [_s("No failure in the window points to a version.", total.ref)]


def _last_switches(items: Iterable[PacketItem]) -> list[PacketItem]:
    last: dict[tuple[str, str | None], PacketItem] = {}
    for i in sorted(items, key=lambda i: (i.at.isoformat() if i.at else "", i.ref)):
        last[(i.facts.get("adapter", "-"), i.tenant_id)] = i
    return [i for i in last.values() if i.facts.get("action") == "kill"]


def _open_items(packet: IncidentPacket, total: PacketItem) -> list[PostmortemSentence]:
    out = [_s(f"Dead letter {d.figures['id']} ({d.code}) is still {d.facts.get('status')}: a "
              "person decides whether to replay it.", d.ref)
           for d in _of(packet, "dead_letter") if d.facts.get("status") in ("OPEN", "APPROVED")]
    out += [_s("An unknown write has no recorded outcome: reconcile it by lookup, never by a "
               "resend.", u.ref)
            for u in _of(packet, "unknown_write") if u.facts.get("state") == "UNRESOLVED"]
    switches = _of(packet, "kill_switch") + _of(packet, "circuit_closure")
    out += [_s(f"The switch {k.facts.get('adapter', '-')}/{k.tenant_id} was last closed at "
               f"{_time(k.at)}: it reopens by the runbook (root cause, fixture, canary).",
               k.ref) for k in _last_switches(switches)]
    out.append(_s("A person reviews this draft before it is shared.", total.ref))
    return out


def offline_postmortem(packet: IncidentPacket) -> Postmortem:
    total = next(i for i in packet.items if i.kind == "totals")
    return Postmortem(impact=_impact(total, _of(packet, "code_group")),
                      timeline=_timeline(packet, total), suspected_cause=_cause(packet, total),
                      open_items=_open_items(packet, total))


class OfflinePostmortemProvider:
    """Satisfies the ``PostmortemProvider`` port with ``offline_postmortem``."""

    name = "offline"
    model = OFFLINE_POSTMORTEM_MODEL

    async def postmortem(self, prompt: PostmortemPrompt) -> PostmortemAnswer:
        draft = offline_postmortem(prompt.packet)
        return PostmortemAnswer(postmortem=draft, raw=draft.model_dump_json(), model=self.model)
