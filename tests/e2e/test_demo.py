"""The demo scenario on the real Temporal dev server, embedded PostgreSQL and stand-ins, and
the checks that keep it from printing DEMO OK over outcomes it did not see."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from contracts import EventState, FinalOutcome, Receipt, ReceiptStatus
from tests.pg_folder import pg_folder
from tests.ports import free_port
from tollgate.dev.demo import run_demo
from tollgate.dev.demo_evidence import Confirmation, Evidence, confirmation_missing, missing

pytestmark = pytest.mark.e2e


@pytest.fixture
def state_dir() -> Iterator[Path]:
    """The stack's folder: not under pytest's basetemp (tests/pg_folder.py says why)."""
    with pg_folder("tollgate-demo-") as base:
        yield base / "state"


async def test_demo_scenario_outcomes(state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The demo injects one 504-after-write on the approved send.
    Evidence that it fired and was reconciled by lookup: the approved event ends SUCCEEDED
    with reason found_at_target (only a lookup after an unknown write gives that reason) and a
    SUCCEEDED receipt carrying the target's message id.
    Invariant: one workflow for two deliveries, the three final states, one message."""
    problems = await run_demo(state_dir, ui_port=free_port())
    out = capsys.readouterr().out
    assert problems == []
    assert out.count("duplicate event/acme/care-C-1001") == 1
    assert re.search(r"event/acme/care-C-1001-\d+\s+SUCCEEDED\s+found_at_target\s+"
                     r"SUCCEEDED msg_\w+", out), out
    assert "STOPPED        no_consent" in out
    assert "DEAD_LETTERED  schema_drift" in out
    assert "messages at the target: 1" in out
    # What the records say: the 504'd write found by the lookup, nothing drafted for C-1002.
    assert ("the approved send: UNKNOWN_WRITE -> RECONCILING -> SUCCEEDED, 1 POST;"
            " the revoked customer's drafts: 0") in out
    # The other two seeds: the page's own keywords, one exact and one trigram merge plus new
    # tags, the removed tag gone for good; the order delivered to inventory, dead-lettered for
    # the down analytics, and its confirmation handed to the control core: sent once, after
    # the order desk's yes.
    assert "exact    UI design" in out and "new      Figma" in out and "new      dashboards" in out
    assert "similar  design systems (similarity 0.81)" in out
    assert ("after removing Figma and a repeated write: UI design, dashboards, "
            "design systems") in out
    assert "analytics     dead_lettered" in out and "inventory     delivered" in out
    assert "notify        handed_over    event/acme/order-demo-1001.notify" in out
    assert ("confirmation SUCCEEDED: 1 message after the approval, 0 before; "
            "published again: duplicate, children 1") in out
    # Triage: the refund question proposed to billing with a reply that waited for a support
    # lead, then assigned once at the helpdesk with its receipt.
    assert "proposal v1: intent refund_request, route billing" in out
    assert re.search(r"event/acme/msg-C-1001-\d+ SUCCEEDED - SUCCEEDED asg_\w+", out), out
    assert re.search(r"assignments of T-\d+ at the helpdesk: 1 \(queue billing, reply posted:"
                     r" True\)", out), out
    assert "DEMO OK" in out


def _receipt(status: ReceiptStatus = ReceiptStatus.SUCCEEDED) -> Receipt:
    return Receipt(action_key="k1", tenant_id="acme", event_id="evt-1", adapter="messaging",
                   action="send_message", request_fingerprint="f", status=status,
                   external_id="msg_1")


def _evidence(**changes: object) -> Evidence:
    seen = {
        "pending_faults": [], "posts_for_key": 1,
        "approved_path": ["VALIDATED", "CONTEXT_READY", "DRAFTED", "AWAITING_REVIEW",
                          "APPROVED", "EXECUTING", "UNKNOWN_WRITE", "RECONCILING", "SUCCEEDED"],
        "approved": FinalOutcome(workflow_id="event/acme/a", state=EventState.SUCCEEDED,
                                 reason_code="found_at_target", receipt=_receipt()),
        "revoked_drafts": 0,
        "revoked": FinalOutcome(workflow_id="event/acme/b", state=EventState.STOPPED,
                                reason_code="no_consent"),
    }
    return Evidence(**{**seen, **changes})  # type: ignore[arg-type]


def test_the_records_of_the_scenario_bear_out_every_claim() -> None:
    assert missing(_evidence()) == []


def test_a_send_that_met_no_504_is_named_though_it_succeeded_with_one_message() -> None:
    straight = _evidence(
        pending_faults=[{"kind": "fail_after_write", "remaining": 1}],
        approved_path=["APPROVED", "EXECUTING", "SUCCEEDED"],
        approved=FinalOutcome(workflow_id="event/acme/a", state=EventState.SUCCEEDED,
                              reason_code="sent", receipt=_receipt()))
    assert missing(straight) == [
        "the 504-after-write fault never fired: no send met it",
        "the lookup did not find the write: the approved event went APPROVED -> EXECUTING ->"
        " SUCCEEDED (sent), not UNKNOWN_WRITE -> RECONCILING -> SUCCEEDED found_at_target"]


def test_a_resend_after_the_504_is_named() -> None:
    (line,) = missing(_evidence(posts_for_key=2))
    assert "POSTed 2 times" in line


def test_a_draft_for_the_revoked_customer_is_named_though_the_run_stopped() -> None:
    (line,) = missing(_evidence(revoked_drafts=1))
    assert line.startswith("the revoked customer's event has 1 draft(s)")


def _confirmation(**changes: object) -> Confirmation:
    seen = {
        "outcome": FinalOutcome(workflow_id="event/acme/o.notify", state=EventState.SUCCEEDED,
                                reason_code="sent", receipt=_receipt()),
        "posts_before_approval": 0, "posts": 1, "republished": "duplicate", "children": 1,
        "dead_letters": ["analytics"],
    }
    return Confirmation(**{**seen, **changes})  # type: ignore[arg-type]


def test_the_confirmation_records_bear_out_the_fan_out_scene() -> None:
    assert confirmation_missing(_confirmation()) == []


@pytest.mark.parametrize(("changes", "start"), [
    ({"posts_before_approval": 1}, "the confirmation was POSTed 1 times before"),
    ({"posts": 2}, "the confirmation ended SUCCEEDED with 2 POST(s)"),
    ({"republished": "accepted"}, "publishing the order again gave accepted"),
    ({"children": 2}, "publishing the order again gave duplicate and 2 children"),
    ({"dead_letters": ["analytics", "notify"]}, "dead letters for ['analytics', 'notify']"),
])
def test_a_confirmation_claim_the_records_do_not_bear_out_is_named(
        changes: dict[str, object], start: str) -> None:
    (line,) = confirmation_missing(_confirmation(**changes))
    assert line.startswith(start)
