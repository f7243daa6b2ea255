"""``tollgate bench --replay`` replays what it says it replays: every committed history, with
the workflow code of this checkout, and counts a history it cannot replay as a failure."""

from __future__ import annotations

from temporalio.client import WorkflowHistory

from tests.conftest import CONVERTER
from tollgate.bench.replay import RUNNERS, committed_histories, replay_speed


async def test_the_committed_histories_all_replay_in_the_bench() -> None:
    histories = committed_histories()
    assert len(histories) >= 20
    found = await replay_speed(histories, CONVERTER, RUNNERS["worker sandbox"])
    assert found["histories"] == len(histories)
    assert found["failures"] == 0


async def test_a_history_of_another_workflow_counts_as_a_failure() -> None:
    original = committed_histories()[0]
    renamed = original.to_json().replace('"name": "ProcessEvent"', '"name": "NoSuchFlow"')
    renamed = renamed.replace('"name": "ReconcileWrite"', '"name": "NoSuchFlow"')
    broken = WorkflowHistory.from_json("broken", renamed)
    found = await replay_speed([broken], CONVERTER, RUNNERS["default sandbox"])
    assert found["failures"] == 1
