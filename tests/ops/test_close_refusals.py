"""What `tollgate ops close` tells an operator whose event's write is unknown. The sweep looks
up only receipts unchanged for 15 minutes, so "run tollgate ops sweep" alone, said a minute
after the run was terminated, sent them to a sweep that answers "0 still open" and to a close
refused again: the refusal now says when the sweep will look. The whole path runs in
tests/cli/test_ops_close_unresolved_write.py; these are its lines, with no server."""

from __future__ import annotations

from datetime import timedelta

from tollgate.ops.unresolved_write import too_recent, write_unknown
from tollgate.runtime.exits import Exit

WID = "event/acme/k-1"


def test_an_open_receipt_changed_just_now_says_when_the_sweep_looks_it_up() -> None:
    refusal = write_unknown(WID, "RECONCILING", "UNKNOWN", timedelta(seconds=40))
    assert refusal.code == Exit.REFUSED
    text = str(refusal)
    assert "(state RECONCILING, receipt UNKNOWN)" in text, text
    assert "unchanged for 15 min; this one changed 0 min ago: run it in 15 min" in text, text
    assert text.endswith("one it keeps open past 15 min: --unresolved-write (docs/runbook.md)")


def test_an_open_receipt_the_sweep_looks_up_already_says_no_wait() -> None:
    text = str(write_unknown(WID, "RECONCILING", "UNKNOWN", timedelta(minutes=20)))
    assert "tollgate ops sweep settles the receipt once the target holds its key, then" in text
    assert "run it in" not in text, text


def test_an_unresolved_write_closed_too_soon_says_how_long_is_left() -> None:
    text = str(too_recent(WID, "RECONCILING", "UNKNOWN", timedelta(minutes=3, seconds=10),
                          timedelta(minutes=15)))
    assert "changed 3 min ago, within 15 min" in text, text
    assert "run tollgate ops sweep in 12 min and close it again" in text, text
