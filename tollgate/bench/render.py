"""What ``tollgate bench`` prints: the side-by-side table of each phase, the history shapes,
the scenario lines, the replay part, the ratios and the checks. Pure functions of the report
dict; the figures and the checks themselves come from ``report.py``."""

from __future__ import annotations

from typing import Any

from tollgate.bench.bracket import PLAIN_AGAIN, plains, reference
from tollgate.bench.goals import PARKED_LOSS, PARKED_RSS_MB, all_cpu_ms, render_goals
from tollgate.bench.load import load_words
from tollgate.bench.pgstats import TOP_STATEMENTS
from tollgate.bench.report import (
    ROWS,
    baselines,
    dig,
    headline,
    missed_warnings,
    ratios,
    shape_warnings,
    verdicts,
)
from tollgate.bench.slowest import missed_line, slowest_line
from tollgate.bench.stats import ratio

SHAPE_ROWS = ("workflow_tasks", "activities", "local_activities", "search_attribute_upserts",
              "signals", "updates", "history_events", "history_bytes", "largest_event_bytes")


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _phase_table(name: str, phase: dict[str, Any]) -> list[str]:
    bases = baselines(phase)
    pipelines = [*bases, "tollgate"]
    quotients = phase.get("ratios") or ratios(phase)
    lines = [f"\n== phase {name}  (duplicates {phase['settings']['duplicates']:.0%}, model "
             f"latency {phase['settings']['model_latency_s']:g} s; "
             f"{load_words(phase['settings'].get('load'))})",
             f"  {'':30}" + "".join(f"{p:>12}" for p in pipelines)
             + "".join(f"{'toll/' + b:>17}" for b in bases)]
    for label, path, _ in ROWS:
        values = [dig(phase[p], path) for p in pipelines]
        if all(v in (None, 0) for v in values) and "duplicate" in label:
            continue
        lines.append(f"  {label:30}" + "".join(f"{_fmt(v):>12}" for v in values)
                     + "".join(f"{_fmt(quotients[b].get(label)):>17}" for b in bases))
    every = [all_cpu_ms(phase[p]) for p in pipelines]
    lines.append(f"  {'all CPU ms/event':30}" + "".join(f"{_fmt(v):>12}" for v in every)
                 + "".join(f"{_fmt(ratio(every[-1], all_cpu_ms(phase[b]))):>17}" for b in bases))
    for pipeline in pipelines:
        summary = phase[pipeline]
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(summary["outcomes"].items()))
        review = ", ".join(f"{k} {v}" for k, v in sorted(summary["reviewer"].items()))
        lines.append(f"  {pipeline:10} outcomes: {outcomes or '-'};  reviewer: {review or '-'}")
    sends = phase["tollgate"].get("target_sends")
    if sends:
        lines.append(f"  messaging target: {sends['sends']} sends, at most {sends['peak_in_1s']}"
                     f" in any 1 s, {sends['mean_per_s']:g}/s first to last")
    lines += [line for p in pipelines
              if (line := slowest_line(p, phase[p].get("slowest_event"))) is not None]
    lines += [line for p in pipelines if (line := missed_line(p, phase[p])) is not None]
    lines += _pg_stats(phase["tollgate"].get("pg_stats"))
    spy = phase["tollgate"].get("py_spy")
    if spy:
        lines.append(f"  tollgate worker's Python CPU by mechanism (py-spy --gil, {spy['samples']}"
                     " samples): " + ", ".join(f"{k} {v:g} %" for k, v in spy["percent"].items()))
    for pipeline in pipelines:
        marks = phase[pipeline]["worker_rss_mb_at"]
        if marks:
            shown = ", ".join(f"{n:,} events {mb:.0f} MB" for n, mb in sorted(marks.items()))
            lines.append(f"  {pipeline:10} worker RSS: {shown}")
    return lines


def _pg_stats(found: dict[str, Any] | None) -> list[str]:
    """--pg-stats: Tollgate's ``TOP_STATEMENTS`` statements by executor time (waits included),
    and what PostgreSQL's active backends waited on."""
    if not found:
        return []
    waits = ", ".join(f"{k} {v:g}" for k, v in found["active_backends_by_wait"].items())
    vacuum = ", ".join(f"{k} {v:g}" for k, v in found.get("autovacuum_by_work", {}).items())
    shown, every = found["statements"][:TOP_STATEMENTS], len(found["statements"])
    lines = [f"  PostgreSQL active backends per sample ({found['wait_samples']} samples): "
             f"{waits or '-'}", f"  autovacuum workers per sample: {vacuum or '-'}",
             "  PostgreSQL statements   ms/event  calls/event  ms/call  rows/call  blocks/call"
             f"  (the top {len(shown)} of {every}; --json keeps every one)"]
    lines += [f"    {_fmt(s['ms_per_event']):>24}{_fmt(s['calls_per_event']):>13}"
              f"{_fmt(s['ms_per_call']):>9}{_fmt(s.get('rows_per_call')):>11}"
              f"{_fmt(s.get('blocks_per_call')):>13}  {s['statement']}"
              for s in shown]
    return lines


def _scenarios(report: dict[str, Any]) -> list[str]:
    phases = report["phases"]
    plain, lines = phases["plain"], []
    pipelines = [*baselines(plain), "tollgate"]
    if "model_latency" in phases:
        slow = phases["model_latency"]
        for p in pipelines:
            with_, without = dig(slow[p], ("ack", "p99_ms")), dig(plain[p], ("ack", "p99_ms"))
            lines.append(f"  model latency {slow['settings']['model_latency_s']:g} s, {p}: "
                         f"intake ack p99 {_fmt(with_)} ms vs {_fmt(without)} ms without "
                         f"(ratio {_fmt(ratio(with_, without))})")
    if "duplicates" in phases:
        dup = phases["duplicates"]
        for p in pipelines:
            with_, without = dup[p]["events_per_s"], reference(plains(phases, p))
            cost = None if not (with_ and without) else round((1 - with_ / without) * 100, 1)
            lines.append(f"  duplicates {dup['settings']['duplicates']:.0%}, {p}: distinct "
                         f"events/s {_fmt(with_)} vs {_fmt(without)} without (cost "
                         f"{_fmt(cost)} %), submissions/s {_fmt(dup[p]['submissions_per_s'])}")
    if "parked" in phases:
        lines += _parked(phases["parked"], phases)
    # The goals' reference too (bracket.py); model latency against the first plain phase.
    again = " (events/s against the mean of plain and plain_again)" if PLAIN_AGAIN in phases \
        else ""
    return ([f"\n== scenarios{again}", *lines]) if lines else []


def _parked(parked: dict[str, Any], phases: dict[str, Any]) -> list[str]:
    n, toll, plain = parked["settings"]["parked"], parked["tollgate"], phases["plain"]
    with_, without = toll["events_per_s"], reference(plains(phases, "tollgate"))
    lines = [f"  parked {n:,}: tollgate events/s {_fmt(with_)} vs {_fmt(without)} without "
             f"(ratio {_fmt(ratio(with_, without))}, goal >= {1 - PARKED_LOSS:.2f}); "
             f"worker RSS {_fmt(parked['settings']['worker_rss_mb_once_parked'])} MB once "
             f"parked, peak {_fmt(toll['worker_peak_rss_mb'])} MB (goal <= "
             f"{PARKED_RSS_MB})"]
    for b in baselines(parked):  # the baselines park nothing: they show the run's drift
        now, before = parked["ratios"][b]["events/s"], plain["ratios"][b]["events/s"]
        lines.append(f"  parked {n:,}: tollgate/{b} events/s {_fmt(now)} vs {_fmt(before)} "
                     "in the plain phase")
    return lines


#: Histories per second the replay should reach with the sandbox, on 2 cores (issue 16).
REPLAY_GOAL_PER_S = 80


def replay_lines(found: dict[str, Any] | None) -> list[str]:
    """The replay part of the report: every variant of each set, and the codec's share."""
    if not found:
        return []
    lines = [f"\n== replay (goal >= {REPLAY_GOAL_PER_S} histories/s with the sandbox and the "
             f"codec; 'per core' runs {found.get('processes_per_core', 1)} processes)"]
    for name, label in (("committed", f"committed x{found['committed_passes']}"),
                        ("run", "recorded in the run")):
        part = found.get(name)
        if not part:
            continue
        lines.append(f"  {label}: payloads decoded once up front, "
                     f"{_fmt(part['decode_ms_per_history'])} ms per history (not timed below)")
        for variant, f in part["variants"].items():
            lines.append(f"    {variant:36}{f['histories']:>6} histories {_fmt(f['per_s']):>8}/s"
                         f"  {_fmt(f['cpu_ms_per_history'])} ms CPU each, {f['failures']} "
                         f"failed, {f.get('processes', 1)} process(es) using "
                         f"{_fmt(f.get('cores_used'))} cores")
        for variant, c in (part.get("codec_share") or {}).items():
            lines.append(f"    codec's share, {variant}: {_fmt(c['codec_cpu_ms'])} of "
                         f"{_fmt(c['with_ms'])} ms CPU per history in the codec "
                         f"({_fmt(c['codec_pct'])} %); {_fmt(c['without_ms'])} ms without it "
                         f"(difference {_fmt(c['difference_ms'])})")
    return lines


def render(report: dict[str, Any]) -> str:
    env, s = report["environment"], report["settings"]
    lines = [
        f"tollgate bench  {report['started_at']}  {env['cpu_count']} cores "
        f"({env['cpu_model']}), Python {env['python']}, temporalio {env['temporalio']}, "
        f"{env['temporal_cli']}, commit {env.get('commit')}",
        f"{s['events']} events per pipeline per phase, concurrency {s['concurrency']}, "
        f"{s['rounds']} rounds each (A B C, C B A ...), warm-up {s['warmup']}, reviewer polls "
        f"every {s['review_poll']} s, target rate limits: "
        f"{', '.join(s.get('rates') or ()) or 'none'}",
    ]
    for name, phase in report["phases"].items():
        lines += _phase_table(name, phase)
    shape = {p: v for p, v in (report.get("history_shape") or {}).items() if v}
    if "tollgate" in shape:
        lines.append("\n== one event's history (plain phase)")
        lines.append(f"  {'':30}" + "".join(f"{p:>12}" for p in shape))
        for key in SHAPE_ROWS:
            lines.append(f"  {key.replace('_', ' '):30}"
                         + "".join(f"{_fmt(v[key]):>12}" for v in shape.values()))
    lines += _scenarios(report)
    lines += replay_lines(report.get("replay"))
    lines.append("\n== throughput, tollgate / baseline (plain phase)")
    lines += [f"  {b:12}{_fmt(r):>8}" for b, r in headline(report).items()]
    lines += render_goals(report)
    problems = verdicts(report)
    lines.append("\n== checks")
    lines += [f"  WARN {w}" for w in (*shape_warnings(report), *missed_warnings(report))]
    lines += [f"  FAIL {p}" for p in problems] or ["  OK  every event accepted once and "
                                                  "finished SUCCEEDED; messages at the target "
                                                  "= distinct approved events"]
    return "\n".join(lines)
