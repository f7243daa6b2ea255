"""What a dead letter's code means, in the operator's words, for `tollgate ops dlq show`.

The replay plan is written with the row and speaks for its step; some codes need more than
that plan says, and rows written before a plan was reworded still need reading. So the meaning
is looked up by code when the row is shown, for every row old or new.
"""

from __future__ import annotations

_RESUBMIT = ("If the customer still needs the message, the producer submits the event again "
             "under a new event id; it goes through review again. A replay from here is refused.")

_NOT_COVERED = ("The approval's action token (ADR 0027) did not cover the send, so nothing "
                "was sent by the step that refused it. ")

MEANINGS: dict[str, str] = {
    "action_token_missing": (
        "The send carried no action token: the event was approved before the release that "
        "mints one (a run past approval at that deploy), or its reconciliation began before "
        "the resend was checked (ADR 0049). Nothing was sent by the step that refused it; the "
        "old approval cannot be reused. If the dead letter names an action key from a "
        "reconciliation, check the target for that key first (the first write's outcome was "
        "unknown). " + _RESUBMIT),
    "action_token_content_changed": (
        _NOT_COVERED + "The draft PostgreSQL holds is not the text the reviewer approved: find who "
        "changed the drafts row (`tollgate ops audit --verify`, `tollgate trace`). " + _RESUBMIT),
    "action_token_replayed": (
        _NOT_COVERED + "Another send already used this token: a copied or replayed request. "
        "Treat it as a security incident. " + _RESUBMIT),
    "action_token_expired": (
        _NOT_COVERED + "The send was scheduled after the token's life "
        "(TOLLGATE_ACTION_TOKEN_TTL_SECONDS). " + _RESUBMIT),
    "action_token_bad_signature": (
        _NOT_COVERED + "The token was not signed with this deployment's key: check that every main "
        "worker holds the same TOLLGATE_ACTION_TOKEN_KEY. " + _RESUBMIT),
    "action_token_malformed": _NOT_COVERED + "The token could not be read. " + _RESUBMIT,
    "action_token_wrong_action": (
        _NOT_COVERED + "The token was minted for another action key. " + _RESUBMIT),
    "no_approval_on_record": (
        "No accepted approval of the draft is on record (for example after a restore from "
        "before it); nothing was sent by the step that refused it. " + _RESUBMIT),
    "no_consent_at_send": (
        "The customer withdrew consent before the reconciler's one resend (ADR 0049); nothing "
        "was resent. Nothing to do unless consent is given again."),
}


def meaning(code: str | None) -> str | None:
    """The operator's reading of ``code``, or None when the replay plan says enough."""
    return MEANINGS.get(code or "")
