"""What a variant of the same-shape skeleton changes: one of the differences between
Tollgate's history and the skeleton's, added to the skeleton alone, so that a run measures
what that difference costs the server (``--variant``; docs/performance.md, "Thirteenth
session: what the server's extra CPU is made of").

- ``bytes``: the skeleton's payloads padded to Tollgate's history bytes (about 17.7 kB against
  12.3 kB), on the events that carry Tollgate's (``PADS``).
- ``update``: the decision an update (``decide``) instead of a signal.
- ``queue``: the send (the last activity) on a task queue of its own, as Tollgate's target's:
  the skeleton's worker takes its main-queue activities eagerly (in the workflow task's
  answer, the dev server allowing it), a send on another queue goes through matching.
- ``upsert``: a second search-attribute upsert, the final state's, with the completion.
- ``timers``: the two timers Tollgate leaves to lapse: the review's (4 h) and the send's
  (10 s, so it fires while the bench runs).
- ``attrs``: Tollgate's search attributes: its two at the start, the review's ticket and due
  time with AWAITING_REVIEW (and the ticket unset in the final upsert, when there is one), and
  the reviewer's listing narrowed by tenant, as Tollgate's is; ``sas`` the attributes alone,
  ``listing`` the listing's clause alone (with the tenant at the start, for it to find).
- ``pollers``: not a history difference but a worker's: the skeleton's main worker with its
  workflow-task polls scaled by the server, as Tollgate's main worker's (ADR 0087), where the
  skeleton keeps the SDK's fixed five (one for new runs).
- ``all``: every history difference above (not ``pollers``).
- ``bytes4``, ``upsert4``, ``timers4``: four times the padding, the extra upsert or the timers;
  ``queue2``: the context read on the send's own queue too (two activities that the skeleton's
  worker would take eagerly, from the workflow task's answer, go through matching instead).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

#: Where the padding goes, in bytes, from Tollgate's approved event against the skeleton's
#: (bench run of 8313597): the start's input +370, the intake update's argument +850, the
#: decision's +600 (the review update's request and answer against a bare signal), the
#: result +210; per ``SHAPE`` step, a step's input and (echoed) result. A local step's marker
#: holds only its result; the validation's is Tollgate's largest event (2,238 bytes).
START, INTAKE, DECISION, END = "start", "intake", "decision", "end"
PADS: dict[str, int] = {START: 370, INTAKE: 850, DECISION: 600, END: 210}
STEP_PADS = (1000, 0, 250, 460, 0, 0, 0, 200)
#: Tollgate's two timers: the review's deadline and the send's "show EXECUTING if it lasts".
REVIEW_TIMER, SEND_TIMER = timedelta(hours=4), timedelta(seconds=10)


def filler(n: int) -> str:
    """``n`` bytes of padding (payloads are stored as they are: no compression to defeat)."""
    return "x" * n


@dataclass(frozen=True)
class Variant:
    """``pads`` and ``timers``: how many times Tollgate's padding and timers (0: none);
    ``upserts``: the search-attribute upserts in all. More than Tollgate's makes a difference
    too small for one run's noise show (its cost per unit, if it grows in proportion)."""

    pads: int = 0
    update: bool = False
    send_queue: bool = False
    reads_apart: bool = False  # the context read on the send's queue too (``queue2``)
    upserts: int = 1
    timers: int = 0
    attrs: bool = False  # Tollgate's attributes: at the start, and the review's with its upsert
    listing: bool = False  # the reviewer's listing narrowed by tenant (the run started with it)
    pollers: bool = False  # the main worker's workflow polls scaled by the server (ADR 0087)

    def pad(self, where: str) -> int:
        return PADS[where] * self.pads

    def step_pads(self) -> tuple[int, ...]:
        return tuple(p * self.pads for p in STEP_PADS)

    def lapse(self, after: timedelta) -> None:
        """Timers never cancelled, as Tollgate's (a cancel is a history event); in a workflow."""
        for _ in range(self.timers):
            asyncio.get_running_loop().call_later(after.total_seconds(), lambda: None)


PLAIN = Variant()
VARIANTS: dict[str, Variant] = {
    "bytes": Variant(pads=1),
    "update": Variant(update=True),
    "queue": Variant(send_queue=True),
    "upsert": Variant(upserts=2),
    "timers": Variant(timers=1),
    "attrs": Variant(attrs=True, listing=True),
    "all": Variant(pads=1, update=True, send_queue=True, upserts=2, timers=1, attrs=True,
                   listing=True),
    # Four times the difference: its cost per unit stands out of the noise four times as far.
    "bytes4": Variant(pads=4),
    "upsert4": Variant(upserts=5),
    "timers4": Variant(timers=4),
    # Both main-queue activities on a queue of their own: two trips through matching.
    "queue2": Variant(send_queue=True, reads_apart=True),
    # ``attrs`` in two: the attributes the runs carry, and the listing's tenant clause.
    "sas": Variant(attrs=True),
    "listing": Variant(listing=True),
    "pollers": Variant(pollers=True),
}
