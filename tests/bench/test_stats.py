"""The bench's arithmetic: percentiles, the duplicate plan, the checks and the ratios. No
servers, no timing: these are the numbers a reader of the bench table relies on."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from tollgate.bench.report import headline, ratios, shape_warnings, verdicts
from tollgate.bench.stats import percentile, summary_ms
from tollgate.bench.tally import Tally, plan


def test_percentile_interpolates_between_closest_ranks() -> None:
    values = [4.0, 1.0, 3.0, 2.0]  # unsorted on purpose
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    assert percentile(values, 50) == pytest.approx(2.5)
    assert percentile(list(range(1, 101)), 99) == pytest.approx(99.01)


def test_percentile_of_nothing_is_none_and_q_is_checked() -> None:
    assert percentile([], 50) is None
    assert percentile([7.0], 99) == 7.0
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_summary_is_in_milliseconds() -> None:
    assert summary_ms([0.010, 0.020, 0.030]) == {"p50_ms": 20.0, "p99_ms": 29.8,
                                                  "max_ms": 30.0, "n": 3}
    assert summary_ms([])["p50_ms"] is None


def test_plan_sends_each_distinct_event_first_and_copies_after_their_original() -> None:
    order = plan(100, 0.3, 10, random.Random(1))
    assert len(order) == 100
    counts = Counter(order)
    assert sorted(counts) == list(range(70))  # 70 distinct events, each sent at least once
    assert sum(counts.values()) - len(counts) == 30
    first_seen: dict[int, int] = {}
    for position, event in enumerate(order):
        first_seen.setdefault(event, position)
    assert [first_seen[e] for e in range(70)] == sorted(first_seen[e] for e in range(70))


def test_plan_without_duplicates_is_the_plain_order() -> None:
    assert plan(5, 0.0, 10, random.Random(1)) == [0, 1, 2, 3, 4]


def _phase(messages: int, approved: int, outcomes: dict[str, int]) -> dict[str, object]:
    base = Tally(events=3, distinct=3, outcomes=Counter({"SUCCEEDED": 3}))
    toll = Tally(events=3, distinct=3, messages=messages, outcomes=Counter(outcomes),
                 reviewer=Counter({"approved": approved}))
    return {"naive": base.summary(), "tollgate": toll.summary()}


def test_verdicts_flag_a_message_count_that_differs_from_approved_events() -> None:
    good = {"phases": {"plain": _phase(3, 3, {"SUCCEEDED": 3})}}
    assert verdicts(good) == []
    extra = {"phases": {"plain": _phase(4, 3, {"SUCCEEDED": 3})}}
    assert any("4 messages at the target" in p for p in verdicts(extra))
    failed = {"phases": {"plain": _phase(2, 2, {"SUCCEEDED": 2, "STOPPED": 1})}}
    assert any("unexpected outcomes" in p for p in verdicts(failed))


def test_ratios_are_tollgate_over_each_baseline() -> None:
    phase = {"settings": {}, "same-shape": {"events_per_s": 20.0, "e2e": {"p50_ms": 100.0}},
             "naive": {"events_per_s": 10.0}, "tollgate": {"events_per_s": 15.0,
                                                           "e2e": {"p50_ms": 150.0}}}
    found = ratios(phase)
    assert set(found) == {"same-shape", "naive"}
    assert found["same-shape"]["events/s"] == 0.75
    assert found["naive"]["events/s"] == 1.5
    assert found["same-shape"]["end-to-end p50 ms"] == 1.5
    assert found["naive"]["end-to-end p50 ms"] is None
    assert headline({"phases": {"plain": phase}}) == {"same-shape": 0.75, "naive": 1.5}


def _shape(activities: int, local: int) -> dict[str, int]:
    return {"activities": activities, "local_activities": local}


def test_shape_warnings_compare_naive_by_its_total_and_same_shape_step_by_step() -> None:
    toll = _shape(3, 6)
    matching = {"history_shape": {"same-shape": _shape(3, 6), "naive": _shape(9, 0),
                                  "tollgate": toll}}
    assert shape_warnings(matching) == []
    drifted = {"history_shape": {"same-shape": _shape(4, 5), "naive": _shape(8, 0),
                                 "tollgate": toll}}
    warned = shape_warnings(drifted)
    assert len(warned) == 3
    assert any("naive 8, tollgate 9" in w for w in warned)
    assert shape_warnings({"history_shape": {"tollgate": toll}}) == [
        "no history sampled: the shapes were not compared"]


def test_a_history_that_does_not_replay_fails_the_bench() -> None:
    clean = {"histories": 5, "per_s": 90.0, "cpu_ms_per_history": 10.0, "failures": 0}
    report = {"phases": {"plain": _phase(3, 3, {"SUCCEEDED": 3})},
              "replay": {"committed_files": 1, "committed_passes": 5,
                         "committed": {"variants": {"default sandbox": clean}},
                         "run": {"variants": {"default sandbox": {**clean, "failures": 2}}}}}
    assert verdicts(report) == ["replay run/default sandbox: 2 histories did not replay"]


def test_the_parked_scenario_compares_with_the_plain_phase_and_the_memory_goal() -> None:
    from tollgate.bench.render import render

    plain = {**_phase(3, 3, {"SUCCEEDED": 3}), "settings": {"duplicates": 0.0,
                                                             "model_latency_s": 0.0}}
    plain["tollgate"] = {**plain["tollgate"], "events_per_s": 10.0}
    parked = {**plain, "settings": {**plain["settings"], "parked": 2000,
                                    "worker_rss_mb_once_parked": 150.0}}
    parked["tollgate"] = {**plain["tollgate"], "events_per_s": 8.0, "worker_peak_rss_mb": 180.0}
    for phase in (plain, parked):
        phase["ratios"] = ratios(phase)
    text = render({"started_at": "t", "settings": {"events": 3, "concurrency": 1, "rounds": 1,
                                                   "warmup": 0, "review_poll": 0.1},
                   "environment": {"cpu_count": 2, "cpu_model": "x", "python": "3.11",
                                   "temporalio": "1", "temporal_cli": "1"},
                   "phases": {"plain": plain, "parked": parked}})
    assert ("parked 2,000: tollgate events/s 8.00 vs 10.0 without (ratio 0.80, goal >= 0.90); "
            "worker RSS 150.0 MB once parked, peak 180.0 MB (goal <= 200)") in text
