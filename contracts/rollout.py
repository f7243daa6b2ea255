"""Rollout modes: how far automation is opened for one tenant and adapter (docs/rollout.md)."""

from __future__ import annotations

from enum import StrEnum

from contracts.base import Frozen


class RolloutMode(StrEnum):
    """From narrowest to widest, as the seed opens automation."""

    FIXTURE = "fixture"    # only fixture events send; every other event stays unsent
    SHADOW = "shadow"      # the whole path runs, nothing is sent, a WOULD_SEND receipt instead
    CANARY = "canary"      # the first N (or a share of keys) send, the rest stay in shadow
    ASSISTED = "assisted"  # every approved send goes out (the default: no row)


#: Narrowest first; "wider" means a later position.
MODE_ORDER: tuple[RolloutMode, ...] = tuple(RolloutMode)

#: Modes that send real business events, so need a passing certification to move into.
CERTIFIED_MODES = frozenset({RolloutMode.CANARY, RolloutMode.ASSISTED})

#: Event ids of fixture events start with this. The event id is inside the signed envelope, so
#: only a holder of the tenant's signing key can mark an event as a fixture.
FIXTURE_EVENT_PREFIX = "fixture-"


def is_fixture_event(event_id: str) -> bool:
    return event_id.startswith(FIXTURE_EVENT_PREFIX)


def wider(new: RolloutMode, old: RolloutMode) -> bool:
    return MODE_ORDER.index(new) > MODE_ORDER.index(old)


class RolloutDecision(Frozen):
    """What the send step may do for one action under the mode in force."""

    mode: RolloutMode
    send: bool
    #: Why not, when ``send`` is False (it becomes the event's reason code).
    reason_code: str | None = None
