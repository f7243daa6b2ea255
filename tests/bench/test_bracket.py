"""The duplicates and parked goals against the plain phases around them: a run whose machine
drifted between the first plain phase and the scenario must not be judged on the first plain
phase alone, and a report without the repeat (older JSON) must read as it always did."""

from __future__ import annotations

from typing import Any

from tests.bench.goals_support import by_name, report
from tollgate.bench.bracket import phase_order
from tollgate.bench.goals import markdown
from tollgate.bench.render import _scenarios


def _names(**asked: Any) -> list[str]:
    return [p.name for p in phase_order(**{"duplicates": 0.0, "model_latency": 0.0,
                                           "parked": 0, **asked})]


def test_plain_runs_again_after_the_compared_phases_and_before_parked() -> None:
    assert _names(duplicates=0.3, model_latency=5, parked=2000) == [
        "plain", "duplicates", "model_latency", "plain_again", "parked"]
    assert _names(duplicates=0.3) == ["plain", "duplicates", "plain_again"]
    assert _names(parked=2000) == ["plain", "plain_again", "parked"]
    # Nothing judged against plain's events/s: no repeat.
    assert _names() == ["plain"]
    assert _names(model_latency=5) == ["plain", "model_latency"]
    assert _names(duplicates=0.3, parked=2000, again=False) == ["plain", "duplicates", "parked"]


def _drifting(dup_eps: float, parked_eps: float) -> dict[str, Any]:
    """Tollgate 12/s in the first plain phase, 18/s in the second (mean 15); the skeleton
    15 then 21 (mean 18)."""
    again = {"settings": {"duplicates": 0, "model_latency_s": 0, "parked": 0},
             "tollgate": {"events_per_s": 18.0}, "same-shape": {"events_per_s": 21.0}}
    dup = {"settings": {"duplicates": 0.3, "parked": 0},
           "tollgate": {"events_per_s": dup_eps, "submissions_per_s": dup_eps * 1.4},
           "same-shape": {"events_per_s": 16.2, "submissions_per_s": 22.7}}
    parked = {"settings": {"parked": 2000, "worker_rss_mb_once_parked": 150.0},
              "tollgate": {"events_per_s": parked_eps, "worker_peak_rss_mb": 160.0},
              "same-shape": {"events_per_s": 18.0}}
    found = report(toll_eps=12.0, phases={"duplicates": dup, "plain_again": again,
                                          "parked": parked})
    del found["phases"]["plain"]["naive"]
    return found


def test_a_scenario_is_judged_against_the_mean_of_the_plain_phases() -> None:
    goals = by_name(_drifting(dup_eps=14.0, parked_eps=12.5))
    # Against the first plain phase alone (12/s) both would look faster: met.
    assert goals["duplicates"].met is False  # 14 vs 15: 7 % lost
    assert goals["parked throughput"].met is False  # 12.5 vs 15: 0.83 x
    assert goals["duplicates"].figure.startswith(
        "14.0 vs 15.0/s (plain 12.0 then 18.0/s, drift +50.0%): 7.0% lost")
    assert goals["parked throughput"].figure.startswith(
        "0.83 x the plain phases' mean (plain 12.0 then 18.0/s, drift +50.0%)")
    met = by_name(_drifting(dup_eps=14.5, parked_eps=14.0))
    assert met["duplicates"].met is True  # 14.5 vs 15: 3 % lost
    assert met["parked throughput"].met is True  # 14 vs 15: 0.93 x


def test_the_skeletons_loss_is_bracketed_the_same_way() -> None:
    goals = by_name(_drifting(dup_eps=14.0, parked_eps=12.5))
    # same-shape 16.2 in the duplicates phase against 15 then 21: 0.9 x, not 1.08 x.
    assert goals["duplicates"].figure.endswith(
        "(same-shape beside it: 10.0% lost; plain 15.0 then 21.0/s, drift +40.0%)")
    assert goals["parked throughput"].figure.endswith(
        "(same-shape beside it: 0.0% lost; plain 15.0 then 21.0/s, drift +40.0%)")
    assert "NOT MET" in markdown(_drifting(dup_eps=14.0, parked_eps=12.5))


def test_the_pipeline_goals_stay_on_the_first_plain_phase() -> None:
    found = _drifting(dup_eps=14.0, parked_eps=12.5)
    # 12/s against same-shape's 15 in the first plain phase; the repeat's 18 vs 21 is not used.
    assert by_name(found)["throughput vs same-shape"].figure == "12.0/s vs 15.0/s: 0.80 x"


def test_a_report_without_the_repeat_reads_as_before() -> None:
    dup = {"settings": {"parked": 0}, "tollgate": {"events_per_s": 14.0},
           "same-shape": {"events_per_s": 18.0}}
    parked = {"settings": {"parked": 2000, "worker_rss_mb_once_parked": 150.0},
              "tollgate": {"events_per_s": 13.0}, "same-shape": {"events_per_s": 12.0}}
    goals = by_name(report(toll_eps=15.0, phases={"duplicates": dup, "parked": parked}))
    assert goals["duplicates"].figure == ("14.0 vs 15.0/s: 7.0% lost "
                                          "(same-shape beside it: -20.0% lost)")
    assert goals["duplicates"].met is False
    assert goals["parked throughput"].figure == ("0.87 x the plain phase "
                                                 "(same-shape beside it: 20.0% lost)")
    assert goals["parked throughput"].met is False


def test_the_scenario_lines_use_the_goals_reference() -> None:
    found = _drifting(dup_eps=14.0, parked_eps=12.5)
    for name in ("plain", "duplicates", "plain_again", "parked"):
        found["phases"][name]["ratios"] = {"same-shape": {"events/s": 1.0}}
    lines = _scenarios(found)
    assert lines[0].endswith("(events/s against the mean of plain and plain_again)")
    assert any("tollgate: distinct events/s 14.0 vs 15.0 without (cost 6.70 %)" in line
               for line in lines)
    assert any("parked 2,000: tollgate events/s 12.5 vs 15.0 without (ratio 0.83" in line
               for line in lines)
