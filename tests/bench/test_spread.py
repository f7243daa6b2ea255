"""Each run says how far its ratios can be trusted: the range of the Tollgate / baseline ratio
over pairs of neighbouring rounds, printed beside the CPU and throughput goals. The verdict stays
on the phase's figure, and a report from before the per-round CPU reads as it did."""

from __future__ import annotations

import json
from typing import Any

from tests.bench.goals_support import by_name, report
from tollgate.bench.goals import as_json, evaluate, markdown, render_goals
from tollgate.bench.report import ratios
from tollgate.bench.tally import Tally


def _round(cpu_per_event: float | None, events_per_s: float) -> dict[str, Any]:
    found: dict[str, Any] = {"events": 10, "wall_s": round(10 / events_per_s, 2),
                             "events_per_s": events_per_s}
    if cpu_per_event is not None:
        found["cpu_ms"] = {"server": cpu_per_event * 10}
        found["cpu_ms_per_event"] = {"server": cpu_per_event}
    return found


def _with_rounds(toll: list[dict[str, Any]], same: list[dict[str, Any]],
                 **kwargs: Any) -> dict[str, Any]:
    found = report(**kwargs)
    found["phases"]["plain"]["tollgate"]["rounds"] = toll
    found["phases"]["plain"]["same-shape"]["rounds"] = same
    return found


def _spread_run(toll_cpu: float = 166.2) -> dict[str, Any]:
    # same-shape 123.6 ms and 15/s in every round; Tollgate's pairs at 1.21, 1.45, 1.34, 1.30 x
    # CPU and 0.93, 0.80, 0.87, 1.00 x throughput.
    same = [_round(123.6, 15.0) for _ in range(4)]
    toll = [_round(149.6, 14.0), _round(179.2, 12.0), _round(165.6, 13.0), _round(160.7, 15.0)]
    found = _with_rounds(toll, same, toll_cpu=toll_cpu, toll_eps=13.5)
    found["phases"]["plain"]["same-shape"]["cpu_ms_per_event"] = {"server": 123.6}
    return found


def test_the_cpu_goal_prints_the_range_over_pairs_of_rounds() -> None:
    goals = by_name(_spread_run())
    cpu = goals["CPU per event vs same-shape"]
    assert cpu.figure == "166.2 ms vs 123.6 ms: 1.34 x (rounds 1.21\u20131.45)"
    assert cpu.rounds == (1.21, 1.45)
    assert cpu.met is False  # the phase's 1.34 x against <= 1.1, as before
    throughput = goals["throughput vs same-shape"]
    assert throughput.figure == "13.5/s vs 15.0/s: 0.90 x (rounds 0.80\u20131.00)"
    assert throughput.met is True  # 0.90 x, though one pair fell to 0.80
    # naive's rounds were not recorded: its goals show the phase figure alone
    assert goals["CPU per event vs naive"].rounds is None
    assert "rounds" not in goals["CPU per event vs naive"].figure


def test_the_verdict_stays_on_the_phase_figure_when_the_range_crosses_the_goal() -> None:
    cpu = by_name(_spread_run(toll_cpu=135.0))["CPU per event vs same-shape"]
    assert cpu.figure == "135.0 ms vs 123.6 ms: 1.09 x (rounds 1.21\u20131.45)"
    assert cpu.met is True


def test_the_ranges_are_in_the_json_and_the_printed_goals() -> None:
    run = _spread_run()
    stored = {g["name"]: g for g in json.loads(json.dumps(as_json(evaluate(run))))}
    assert stored["CPU per event vs same-shape"]["rounds"] == [1.21, 1.45]
    assert stored["throughput vs same-shape"]["rounds"] == [0.8, 1.0]
    assert stored["intake ack p50 vs same-shape"]["rounds"] is None
    pairs = ratios(run["phases"]["plain"])["same-shape"]["rounds"]
    assert pairs == {"all CPU ms/event": [1.21, 1.45, 1.34, 1.3],
                     "events/s": [0.93, 0.8, 0.87, 1.0]}
    assert any("1.34 x (rounds 1.21\u20131.45)" in line for line in render_goals(run))
    assert "1.34 x (rounds 1.21\u20131.45) | NOT MET |" in markdown(run)


def test_an_older_report_without_per_round_cpu_prints_as_before() -> None:
    old = _with_rounds([_round(None, 14.0), _round(None, 12.0)],
                       [_round(None, 15.0), _round(None, 15.0)], toll_cpu=130.0)
    goals = by_name(old)
    assert goals["CPU per event vs same-shape"].figure == "130.0 ms vs 115.0 ms: 1.13 x"
    assert goals["throughput vs same-shape"].figure == "15.0/s vs 15.0/s: 1.00 x"
    assert all(g.rounds is None for g in goals.values())
    assert "rounds" not in ratios(old["phases"]["plain"])["same-shape"]


def test_one_pair_or_a_round_without_events_gives_no_range() -> None:
    one = _with_rounds([_round(150.0, 14.0)], [_round(120.0, 15.0)])
    assert by_name(one)["CPU per event vs same-shape"].rounds is None
    idle = {**_round(120.0, 15.0), "events": 0, "cpu_ms_per_event": None}
    two = _with_rounds([_round(150.0, 14.0), _round(130.0, 13.0)],
                       [_round(120.0, 15.0), idle])
    # the idle round's CPU pair is left out: one CPU pair left; both throughput pairs stand
    assert by_name(two)["CPU per event vs same-shape"].rounds is None
    assert by_name(two)["throughput vs same-shape"].rounds == (0.87, 0.93)


def test_rounds_keep_their_cpu_and_the_phase_figure_is_their_sum() -> None:
    tally = Tally()
    tally.events = 30
    tally.add_round(10, 2.0, {"server": 600.0, "worker": 400.0})
    tally.add_round(20, 2.5, {"server": 1400.0, "worker": 900.0})
    summary = tally.summary()
    # the phase's CPU per event is over its rounds as a whole: (600 + 1400) / 30 events
    assert summary["cpu_ms_per_event"] == {"server": 66.7, "worker": 43.3}
    assert summary["wall_s"] == 4.5
    assert summary["rounds"] == [
        {"events": 10, "wall_s": 2.0, "events_per_s": 5.0,
         "cpu_ms": {"server": 600.0, "worker": 400.0},
         "cpu_ms_per_event": {"server": 60.0, "worker": 40.0}},
        {"events": 20, "wall_s": 2.5, "events_per_s": 8.0,
         "cpu_ms": {"server": 1400.0, "worker": 900.0},
         "cpu_ms_per_event": {"server": 70.0, "worker": 45.0}}]
    tally.add_round(0, 1.0, {"server": 50.0})
    assert tally.summary()["rounds"][-1]["cpu_ms_per_event"] is None
