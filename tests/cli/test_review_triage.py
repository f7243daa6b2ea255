"""`tollgate review show` spells out a triage proposal's assignment for the reviewer."""

from __future__ import annotations

import pytest

from contracts.triage import Assignment
from tollgate.cli.review_triage import print_message


def test_an_assignment_reads_as_what_will_happen(capsys: pytest.CaptureFixture[str]) -> None:
    print_message(Assignment(ticket_ref="T-0931", queue="billing", intent="refund_request",
                             reply="Hi Lan, our billing team will look into it.").body())
    assert capsys.readouterr().out.splitlines() == [
        "  assign ticket T-0931 to billing (intent refund_request)",
        "  reply to the customer: Hi Lan, our billing team will look into it."]


def test_no_reply_is_said_and_a_reminder_prints_as_it_is(
        capsys: pytest.CaptureFixture[str]) -> None:
    print_message(Assignment(ticket_ref="T-1", queue="front_desk", intent="booking").body())
    print_message("Hi Lan, Miu's vaccination is due on 1 December 2030.")
    assert capsys.readouterr().out.splitlines() == [
        "  assign ticket T-1 to front_desk (intent booking)",
        "  reply to the customer: none",
        "  Hi Lan, Miu's vaccination is due on 1 December 2030."]
