"""Who may steer operations: the authority matrix of docs/security.md, as data and one pure
check. The roles come from a verified token (``contracts.identity.VerifiedIdentity``), never
from a flag; every refusal is audited by the caller (``OpsStore.record_refusal``).

Seed 000's runbook: the incident commander (or on-call, or the circuit) may stop sends at once;
only the change owner reopens, and only with the runbook's fields (root cause, the fixture that
now covers it, the canary to reopen through).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from contracts.identity import VerifiedIdentity


class OpsAction(StrEnum):
    KILL_SWITCH_CLOSE = "kill_switch_close"
    KILL_SWITCH_REOPEN = "kill_switch_reopen"
    DEAD_LETTER_APPROVE = "dead_letter_approve"
    DEAD_LETTER_REPLAY = "dead_letter_replay"
    #: Close a dead letter for good (ADR 0060): never replayed, its write off the books; a
    #: decision like approving its replay, so the same roles.
    DEAD_LETTER_CLOSE = "dead_letter_close"
    ROLLOUT_CHANGE = "rollout_change"
    #: A tenant's own contact points (ADR 0039): what its drafts may name without a flag.
    CONTACTS_CHANGE = "contacts_change"
    #: Mark an incident's postmortem draft reviewed (ADR 0046): the model drafts, an owner signs.
    INCIDENT_REVIEW = "incident_review"
    #: Record the end of an event whose run ended with no outcome (``ops close``), with
    #: ``--unresolved-write`` its dead letter too: bookkeeping of an end that already
    #: happened, the on-call's work; nothing is sent, and the dead letter's replay still
    #: needs DEAD_LETTER_APPROVE.
    RUN_CLOSE = "run_close"
    #: Put an outbox row moved aside back in line: the same workflow id (a run that exists
    #: answers it as a duplicate) and the whole gate ahead of it, so as safe as a replay.
    OUTBOX_RETRY = "outbox_retry"
    #: Never send an outbox row: the event is lost for good, a decision like approving a
    #: dead letter, so the owners only.
    OUTBOX_DROP = "outbox_drop"


class OpsRead(StrEnum):
    """What the operator read commands show, given a token (ADR 0076): any verified identity
    may read its own tenant's rows, whatever its roles (reviewers already see their tenant's
    drafts); no role is needed, so these are no ``AUTHORITY`` entries."""

    DEAD_LETTER_READ = "dead_letter_read"
    OUTBOX_READ = "outbox_read"
    INCIDENT_READ = "incident_read"
    #: ``tollgate trace`` and ``ops state``: one event's chain or state.
    EVENT_READ = "event_read"


#: action -> the roles that may take it.
AUTHORITY: dict[OpsAction, frozenset[str]] = {
    OpsAction.KILL_SWITCH_CLOSE: frozenset({"incident_commander", "on_call", "circuit"}),
    OpsAction.KILL_SWITCH_REOPEN: frozenset({"change_owner"}),
    OpsAction.DEAD_LETTER_APPROVE: frozenset({"change_owner", "incident_commander"}),
    OpsAction.DEAD_LETTER_REPLAY: frozenset({"change_owner", "incident_commander", "on_call"}),
    OpsAction.DEAD_LETTER_CLOSE: frozenset({"change_owner", "incident_commander"}),
    OpsAction.ROLLOUT_CHANGE: frozenset({"change_owner"}),
    OpsAction.CONTACTS_CHANGE: frozenset({"change_owner"}),
    OpsAction.INCIDENT_REVIEW: frozenset({"change_owner", "incident_commander"}),
    OpsAction.RUN_CLOSE: frozenset({"change_owner", "incident_commander", "on_call"}),
    OpsAction.OUTBOX_RETRY: frozenset({"change_owner", "incident_commander", "on_call"}),
    OpsAction.OUTBOX_DROP: frozenset({"change_owner", "incident_commander"}),
}
#: What a service account may do at all: the circuit stops sends; nothing else is automated.
SERVICE_ACTIONS = frozenset({OpsAction.KILL_SWITCH_CLOSE})
#: The runbook's fields a reopen must carry.
REOPEN_FIELDS = ("root_cause", "fixture", "canary")


@dataclass(frozen=True)
class AuthorityVerdict:
    ok: bool
    reason_code: str | None = None
    message: str = ""


def authorize_ops(action: OpsAction, who: VerifiedIdentity, *, tenant: str,
                  runbook: dict[str, object] | None = None) -> AuthorityVerdict:
    """May ``who`` take ``action`` on ``tenant`` ('*': every tenant)? A token of one tenant acts
    on that tenant only; one whose tenant claim is '*' may act on any."""
    allowed = AUTHORITY[action]
    if who.service and action not in SERVICE_ACTIONS:
        return AuthorityVerdict(False, "service_account",
                                f"a service or shared account may not {action.value}")
    if not allowed.intersection(who.roles):
        return AuthorityVerdict(False, "role_not_allowed", f"{action.value} needs one of the "
                                f"roles {', '.join(sorted(allowed))}")
    if who.tenant != "*" and tenant != who.tenant:
        # Names the token's tenant, never the target's: where the tenant comes from a row (a
        # dead letter), naming it would tell another tenant's token that the row exists and
        # whose it is.
        return AuthorityVerdict(False, "cross_tenant", f"the token may {action.value} for its "
                                f"own tenant ('{who.tenant}') only")
    if action == OpsAction.KILL_SWITCH_REOPEN:
        missing = [f for f in REOPEN_FIELDS if not (runbook or {}).get(f)]
        if missing:
            return AuthorityVerdict(False, "runbook_incomplete", "a reopen needs the runbook's "
                                    f"fields: {', '.join(missing)}"
                                    + (_canary_missing(runbook) if "canary" in missing else ""))
    return AuthorityVerdict(True)


def authorize_read(what: OpsRead, who: VerifiedIdentity, *, tenant: str) -> AuthorityVerdict:
    """May ``who`` read ``what`` of ``tenant`` ('*': a row of every tenant, or of none)? Its
    own tenant's only, in the words of ``authorize_ops``'s cross-tenant refusal (the token's
    tenant named, never the row's); an identity of every tenant reads any."""
    if who.tenant != "*" and tenant != who.tenant:
        return AuthorityVerdict(False, "cross_tenant", f"the token may {what.value} for its "
                                f"own tenant ('{who.tenant}') only")
    return AuthorityVerdict(True)


def _canary_missing(runbook: dict[str, object] | None) -> str:
    """What a missing canary means: a reopen without ``--canary`` confirms only a canary that
    passed, and an operator confirming one still running would otherwise read the refusal as
    "--canary is always required". ``canary_left``: the running canary's actions still to go."""
    left = (runbook or {}).get("canary_left")
    running = f"; this switch's canary has {left} action(s) left" if left else ""
    return (" (--canary N lets N actions through; a reopen without it confirms a canary that "
            f"passed: its actions all went and the switch closed again{running})")
