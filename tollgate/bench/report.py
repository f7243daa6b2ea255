"""What ``tollgate bench`` finds in a run: the rows it compares, the tollgate/baseline ratios,
the headline figures, the checks (a line for each broken promise) and the shape warnings. Pure
functions of the report dict; ``render.py`` prints them."""

from __future__ import annotations

from typing import Any

from tollgate.bench.spread import pair_ratios
from tollgate.bench.stats import ratio
from tollgate.runtime.run_end import CHECK_EVERY_S

#: (label, path into a pipeline's summary, whether a ratio tollgate/baseline means something)
ROWS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("events/s", ("events_per_s",), True),
    ("submissions/s", ("submissions_per_s",), True),
    ("end-to-end p50 ms", ("e2e", "p50_ms"), True),
    ("end-to-end p99 ms", ("e2e", "p99_ms"), True),
    ("intake ack p50 ms", ("ack", "p50_ms"), True),
    ("intake ack p99 ms", ("ack", "p99_ms"), True),
    ("duplicate ack p50 ms", ("duplicate_ack", "p50_ms"), True),
    ("duplicate ack p99 ms", ("duplicate_ack", "p99_ms"), True),
    ("server CPU ms/event", ("cpu_ms_per_event", "server"), True),
    ("worker CPU ms/event", ("cpu_ms_per_event", "worker"), True),
    ("PostgreSQL CPU ms/event", ("cpu_ms_per_event", "postgres"), True),
    ("bench+stand-ins CPU ms/event", ("cpu_ms_per_event", "driver"), True),
    ("PG round trips/event", ("pg_round_trips_per_event", "total"), False),
    ("  of which pool resets", ("pg_round_trips_per_event", "reset"), False),
    ("worker peak RSS MB", ("worker_peak_rss_mb",), True),
)


def dig(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def baselines(phase: dict[str, Any]) -> list[str]:
    """The baselines a phase ran, in run order (every pipeline but Tollgate)."""
    return [p for p in phase if p not in ("settings", "ratios", "tollgate")]


def ratios(phase: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """tollgate / baseline for every baseline and every row where the quotient means
    something; under ``rounds`` the same for each pair of neighbouring rounds (spread.py)."""
    found: dict[str, dict[str, Any]] = {}
    for b in baselines(phase):
        found[b] = {label: ratio(dig(phase["tollgate"], path), dig(phase[b], path))
                    for label, path, meaningful in ROWS if meaningful}
        pairs = pair_ratios(phase, b)
        if any(pairs.values()):
            found[b]["rounds"] = pairs
    return found


def headline(report: dict[str, Any]) -> dict[str, float | None]:
    """The plain phase's throughput ratio against each baseline: the figures the goals use."""
    plain = report["phases"]["plain"]
    found = plain.get("ratios") or ratios(plain)
    return {b: found[b].get("events/s") for b in baselines(plain)}


def verdicts(report: dict[str, Any]) -> list[str]:
    """Every broken promise in the run, one line each (empty: all held)."""
    problems = []
    for name, phase in report["phases"].items():
        for pipeline in [*baselines(phase), "tollgate"]:
            summary = phase[pipeline]
            bad = {k: v for k, v in summary["outcomes"].items()
                   if k not in ("SUCCEEDED", "ack:duplicate")}
            if bad:
                problems.append(f"{name}/{pipeline}: unexpected outcomes {bad}")
            if summary["events"] != summary["distinct_events"]:
                problems.append(f"{name}/{pipeline}: {summary['events']} events finished, "
                                f"{summary['distinct_events']} distinct were sent")
        toll = phase["tollgate"]
        approved = toll["reviewer"].get("approved", 0)
        if not toll["messages_at_target"] == approved == toll["distinct_events"]:
            problems.append(f"{name}: {toll['messages_at_target']} messages at the target, "
                            f"{approved} approved, {toll['distinct_events']} distinct events")
    for name in ("committed", "run"):
        variants = ((report.get("replay") or {}).get(name) or {}).get("variants") or {}
        problems += [f"replay {name}/{variant}: {f['failures']} histories did not replay"
                     for variant, f in variants.items() if f["failures"]]
    return problems


def shape_warnings(report: dict[str, Any]) -> list[str]:
    """The baselines must keep the pipeline's shape; say so when the histories differ. The
    naive baseline runs every local step as a normal activity, so only its total must match."""
    shape = report.get("history_shape") or {}
    toll = shape.get("tollgate")
    if not toll or not any(shape.get(b) for b in ("same-shape", "naive")):
        return ["no history sampled: the shapes were not compared"]
    fix = "; update SHAPE in tollgate/bench/baseline.py to match the pipeline"
    warnings = []
    same = shape.get("same-shape")
    if same:
        warnings += [f"{key.replace('_', ' ')}: same-shape {same[key]}, tollgate {toll[key]}{fix}"
                     for key in ("activities", "local_activities") if same[key] != toll[key]]
    naive = shape.get("naive")
    steps = toll["activities"] + toll["local_activities"]
    if naive and naive["activities"] != steps:
        warnings.append(f"activities: naive {naive['activities']}, tollgate {steps} (activities "
                        f"+ local activities){fix}")
    return warnings


def missed_warnings(report: dict[str, Any]) -> list[str]:
    """A line for each phase and pipeline where a run's close was not notified to the wait for
    its result (ADR 0083): the figures still hold, but a round's wall time then includes up to
    ``CHECK_EVERY_S`` of waiting for each such event."""
    found = []
    for name, phase in report["phases"].items():
        for pipeline in [*baselines(phase), "tollgate"]:
            missed = phase[pipeline].get("missed_closes") or []
            if missed:
                found.append(f"{name}/{pipeline}: {len(missed)} missed close notification(s), "
                             f"each learned up to {CHECK_EVERY_S:g} s late (ADR 0083)")
    return found
