"""The triage validator and the policy's say on auto-routing (issue 32, ADR 0044). Pure.

``inspect_triage`` checks a model's ``TriageProposal`` against the request it answers and gives
``Flag``s as the draft validator does (``policies/draft_validator.py``):

    route_not_allowed           the route is not on the rule's list of teams and queues
    intent_not_allowed          the intent is not one the rule names
    unknown_source_ref:<ref>    a claim cites a fact the model was not given
    claim_without_source:<c>    the intent, the route or a conflicting or missing field cites
                                nothing
    (every draft-validator flag) for the reply, the reason and the notes: the reply is a
                                message to the customer and meets the same output policy

Whatever a rule's ``stop_flags`` say, ``ALWAYS_STOP`` stops the event (FAILED_VALIDATION):
a route off the list, an unknown ref or a claim with no source is the model making things up.

``may_auto_route`` is the policy's decision that no reviewer is needed; a reply to the customer
never qualifies.
"""

from __future__ import annotations

from contracts import Draft, DraftRequest, DraftResult, Flag, PolicyRule
from contracts.triage import Assignment, FieldIssue, TriageProposal
from policies.draft_validator import inspect_draft, stopping

#: Findings that stop a triage event under any rule.
ALWAYS_STOP = frozenset({"route_not_allowed", "intent_not_allowed", "unknown_source_ref",
                         "claim_without_source", "too_long", "no_ticket_ref"})
#: The context fact naming the helpdesk ticket the assignment is for.
TICKET_REF = "event.thread_id"
#: ``Draft.message`` and ``ActionRequest.body`` hold at most this many characters.
MAX_BODY = 1000
#: Where each draft-validator source lands in a triage proposal.
_SOURCES = {"draft.message": "triage.reply", "draft.reason": "triage.reason"}


def inspect_triage(proposal: TriageProposal, request: DraftRequest) -> list[Flag]:
    """Every flag for a proposal; empty = clean. ``request.rule.triage`` holds the lists."""
    rules = request.rule.triage if request.rule else None
    flags: list[Flag] = []
    if rules is None or proposal.route.value not in rules.routes:
        flags.append(_flag("route_not_allowed", "route_list", "triage.route",
                           proposal.route.value))
    if rules is None or proposal.intent.value not in rules.intents:
        flags.append(_flag("intent_not_allowed", "intent_list", "triage.intent",
                           proposal.intent.value))
    claims: list[tuple[str, list[str], bool]] = [
        ("intent", proposal.intent.source_refs, True),
        ("route", proposal.route.source_refs, True),
        *((f"conflicts.{i}", c.source_refs, True) for i, c in enumerate(proposal.conflicts)),
        *((f"missing.{i}", m.source_refs, True) for i, m in enumerate(proposal.missing)),
        *([("reply", proposal.reply.source_refs, False)] if proposal.reply else []),
    ]
    for name, refs, needs_source in claims:
        if needs_source and not refs:
            flags.append(_flag(f"claim_without_source:{name.split('.')[0]}",
                               "claim_without_source", f"triage.{name}", name))
    # The reply, the reason and the notes are text a person reads (the reply, the customer):
    # the output policy of the draft validator applies to them as written.
    text = Draft(message=proposal.reply.message if proposal.reply else "",
                 source_refs=sorted({r for _, refs, _ in claims for r in refs})[:20],
                 unknowns=[_issue_text(i) for i in (*proposal.conflicts, *proposal.missing)],
                 reason=proposal.reason)
    for flag in inspect_draft(text, request):
        source = _SOURCES.get(flag.source, flag.source.replace("draft.", "triage."))
        flags.append(flag.model_copy(update={"source": source}))
    if TICKET_REF not in request.context:
        flags.append(_flag("no_ticket_ref", "no_ticket_ref", TICKET_REF, TICKET_REF))
    return _unique(flags)


def stopping_triage(flags: list[Flag], rule: PolicyRule | None) -> list[str]:
    """The findings that stop the event: the rule's ``stop_flags`` and ``ALWAYS_STOP``."""
    ruled = set(stopping(flags, rule))
    return [c for c in dict.fromkeys(f.finding for f in flags)
            if c in ruled or c.split(":", 1)[0] in ALWAYS_STOP]


def assignment_draft(proposal: TriageProposal, context: dict[str, str]) -> Draft:
    """The proposal as the ``Draft`` a reviewer approves and the send step sends: its message
    is the helpdesk ``Assignment`` as canonical JSON, its refs every claim's, its unknowns the
    conflicting and missing fields. Call only on a proposal ``inspect_triage`` passed."""
    reply = proposal.reply.message.strip() if proposal.reply else ""
    body = Assignment(ticket_ref=context[TICKET_REF], queue=proposal.route.value,
                      intent=proposal.intent.value, reply=reply or None).body()
    refs = [*proposal.intent.source_refs, *proposal.route.source_refs,
            *(r for i in (*proposal.conflicts, *proposal.missing) for r in i.source_refs),
            *(proposal.reply.source_refs if proposal.reply else [])]
    return Draft(message=body, source_refs=list(dict.fromkeys(refs))[:20],
                 unknowns=[_issue_text(i) for i in (*proposal.conflicts, *proposal.missing)][:20],
                 reason=proposal.reason, confidence=proposal.confidence)


def body_fits(proposal: TriageProposal, context: dict[str, str]) -> bool:
    """Whether the assignment's JSON fits the action body (escaping can lengthen a reply)."""
    reply = proposal.reply.message.strip() if proposal.reply else ""
    return len(Assignment(ticket_ref=context[TICKET_REF], queue=proposal.route.value,
                          intent=proposal.intent.value, reply=reply or None).body()) <= MAX_BODY


def may_auto_route(rule: PolicyRule, result: DraftResult) -> bool:
    """True when the policy assigns this ticket with no reviewer: a clean proposal (drafted,
    no flag at all), an intent the rule lists under ``auto_route_intents``, no conflicting or
    missing field, and no reply draft: nothing reaches the customer without review."""
    proposal = result.triage
    if rule.triage is None or proposal is None or result.status != "drafted":
        return False
    return (proposal.intent.value in rule.triage.auto_route_intents and proposal.reply is None
            and not proposal.conflicts and not proposal.missing and not result.flags)


def _issue_text(issue: FieldIssue) -> str:
    return f"{issue.field}: {issue.note}" if issue.note else issue.field


def _flag(finding: str, rule: str, source: str, span: str) -> Flag:
    return Flag(finding=finding, rule=rule, source=source, span=span[:200])


def _unique(flags: list[Flag]) -> list[Flag]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for f in flags:
        if (f.finding, f.rule, f.source) not in seen:
            seen.add((f.finding, f.rule, f.source))
            out.append(f)
    return out
