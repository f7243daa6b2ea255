"""Issue 33's goals, judged from one bench report: each goal's figure and whether it was met,
with the machine's load during the run beside them (``load.py``). The CPU and throughput goals
also print their ratio's range over pairs of neighbouring rounds (``spread.py``); the verdict
stays on the phase's figure. Pure functions of the report dict; ``render.py`` prints them and
``command.py`` stores them in ``--json`` under ``goals``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tollgate.bench.bracket import drift, plains, reference
from tollgate.bench.load import load_words
from tollgate.bench.spread import CPU, THROUGHPUT, all_cpu_ms, pair_ratios, span, span_words
from tollgate.bench.stats import ratio

#: Tollgate's all-process CPU per event against each baseline's, at most (issue 33).
CPU_VS_NAIVE, CPU_VS_SAME_SHAPE = 0.67, 1.1
#: Tollgate's events/s against each baseline's, at least.
THROUGHPUT_VS_NAIVE, THROUGHPUT_VS_SAME_SHAPE = 1.5, 0.9
#: Intake acknowledgement p50 and p99 against same-shape's, at most.
ACK_VS_SAME_SHAPE = 1.2
#: One approved event's history, at most.
HISTORY_EVENTS, HISTORY_UPSERTS = 40, 2
#: Histories per second with the sandbox and the payload codec, at least.
REPLAY_PER_S = 80
#: Distinct throughput the duplicates phase may lose, and the parked phase; the worker's RSS.
DUPLICATE_LOSS, PARKED_LOSS, PARKED_RSS_MB = 0.05, 0.10, 200


@dataclass(frozen=True)
class Goal:
    name: str
    goal: str  # what must hold, in words
    figure: str  # what this run measured, in words ("not run" when the phase was not run)
    met: bool | None  # None: this run cannot tell (phase not run, figure missing)
    #: The lowest and highest ratio over pairs of neighbouring rounds (spread.py); not judged.
    rounds: tuple[float, float] | None = None


def _at_most(q: float | None, limit: float) -> bool | None:
    return None if q is None else q <= limit


def _at_least(q: float | None, limit: float) -> bool | None:
    return None if q is None else q >= limit


def _f(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:,.2f}{unit}" if abs(value) < 10 else \
        f"{value:,.1f}{unit}"


def _against(name: str, limit: float, toll: float | None, base: float | None, unit: str,
             more_is_better: bool, baseline: str, pairs: list[float] | None = None) -> Goal:
    q = ratio(toll, base)
    sign = ">=" if more_is_better else "<="
    rounds = span(pairs or []) if base is not None else None
    figure = ("not run" if base is None and toll is not None else
              f"{_f(toll, unit)} vs {_f(base, unit)}: {_f(q)} x{span_words(rounds)}")
    met = _at_least(q, limit) if more_is_better else _at_most(q, limit)  # the phase's figure
    return Goal(name, f"{sign} {limit:g} x {baseline}'s", figure, met, rounds)


def _pipeline_goals(plain: dict[str, Any]) -> list[Goal]:
    toll = plain.get("tollgate") or {}
    naive, same = plain.get("naive"), plain.get("same-shape")
    by_naive, by_same = pair_ratios(plain, "naive"), pair_ratios(plain, "same-shape")
    goals = [
        _against("CPU per event vs naive", CPU_VS_NAIVE, all_cpu_ms(toll), all_cpu_ms(naive),
                 " ms", False, "naive", by_naive[CPU]),
        _against("CPU per event vs same-shape", CPU_VS_SAME_SHAPE, all_cpu_ms(toll),
                 all_cpu_ms(same), " ms", False, "same-shape", by_same[CPU]),
        _against("throughput vs naive", THROUGHPUT_VS_NAIVE, toll.get("events_per_s"),
                 (naive or {}).get("events_per_s"), "/s", True, "naive", by_naive[THROUGHPUT]),
        _against("throughput vs same-shape", THROUGHPUT_VS_SAME_SHAPE,
                 toll.get("events_per_s"), (same or {}).get("events_per_s"), "/s", True,
                 "same-shape", by_same[THROUGHPUT]),
    ]
    for q in ("p50", "p99"):
        goals.append(_against(f"intake ack {q} vs same-shape", ACK_VS_SAME_SHAPE,
                              (toll.get("ack") or {}).get(f"{q}_ms"),
                              ((same or {}).get("ack") or {}).get(f"{q}_ms"), " ms", False,
                              "same-shape"))
    return goals


def _history_goals(shape: dict[str, Any] | None) -> list[Goal]:
    toll = (shape or {}).get("tollgate")
    if not toll:
        return [Goal("history events", f"<= {HISTORY_EVENTS}", "not sampled", None),
                Goal("search-attribute upserts", f"<= {HISTORY_UPSERTS}", "not sampled", None)]
    events, upserts = toll["history_events"], toll["search_attribute_upserts"]
    return [Goal("history events", f"<= {HISTORY_EVENTS}", str(events),
                 events <= HISTORY_EVENTS),
            Goal("search-attribute upserts", f"<= {HISTORY_UPSERTS}", str(upserts),
                 upserts <= HISTORY_UPSERTS)]


def _replay_goal(replay: dict[str, Any] | None) -> Goal:
    goal = f">= {REPLAY_PER_S} histories/s, sandbox and codec"
    best = (replay or {}).get("best") or {}
    with_codec, without = best.get("with_codec"), best.get("without_codec")
    if not with_codec:
        return Goal("replay", goal, "not run", None)
    figure = (f"{_f(with_codec['per_s'])}/s with the codec ({with_codec['label']}), "
              f"{_f((without or {}).get('per_s'))}/s without")
    if with_codec.get("codec_cpu_ms_per_history") is not None:
        figure += (f"; the codec {_f(with_codec['codec_cpu_ms_per_history'])} of "
                   f"{_f(with_codec.get('cpu_ms_per_history'))} ms CPU per history")
    return Goal("replay", goal, figure, _at_least(with_codec["per_s"], REPLAY_PER_S))


def _plain_words(figures: tuple[float, ...]) -> str:
    """'plain 12.0 then 18.0/s, drift +50.0%' when the run repeated the plain phase."""
    change = drift(figures)
    return "" if change is None else (f"plain {_f(figures[0])} then {_f(figures[1])}/s, "
                                      f"drift {change:+.1%}")


def _against_plain(phases: dict[str, Any], phase: str, pipeline: str) -> float | None:
    """The pipeline's events/s in ``phase`` over the mean of its plain phases (bracket.py)."""
    return ratio(((phases.get(phase) or {}).get(pipeline) or {}).get("events_per_s"),
                     reference(plains(phases, pipeline)))


def _skeleton_beside(phases: dict[str, Any], phase: str) -> str:
    """What the same-shape skeleton lost in ``phase`` against its own plain phases, in the same
    run and computed as Tollgate's figure is: a change that hits every pipeline (the plain
    phase's warming up, the machine's load) shows here too. Not judged."""
    q = _against_plain(phases, phase, "same-shape")
    again = _plain_words(plains(phases, "same-shape"))
    if q is None:
        return ""
    return f" (same-shape beside it: {1 - q:.1%} lost{f'; {again}' if again else ''})"


def _scenario_goals(phases: dict[str, Any]) -> list[Goal]:
    """The duplicates and parked-throughput goals, each against the mean of the plain phases
    (``plain`` and, when the run repeated it, ``plain_again``: bracket.py says why)."""
    figures = plains(phases, "tollgate")
    again = _plain_words(figures)
    goals = []
    dup = (phases.get("duplicates") or {}).get("tollgate")
    words = f"distinct events/s lose <= {DUPLICATE_LOSS:.0%} with 30 % duplicates"
    if dup is None:
        goals.append(Goal("duplicates", words, "not run", None))
    else:
        q = _against_plain(phases, "duplicates", "tollgate")
        loss = None if q is None else round(1 - q, 3)
        goals.append(Goal("duplicates", words,
                          f"{_f(dup.get('events_per_s'))} vs {_f(reference(figures))}/s"
                          f"{f' ({again})' if again else ''}: "
                          f"{'-' if loss is None else f'{loss:.1%}'} lost"
                          + _skeleton_beside(phases, "duplicates"),
                          _at_most(loss, DUPLICATE_LOSS)))
    parked = phases.get("parked")
    if parked is None:
        return [*goals, Goal("parked memory", f"worker RSS <= {PARKED_RSS_MB} MB", "not run",
                             None),
                Goal("parked throughput", f"loss <= {PARKED_LOSS:.0%}", "not run", None)]
    rss = max(parked["settings"].get("worker_rss_mb_once_parked") or 0,
              parked["tollgate"].get("worker_peak_rss_mb") or 0) or None
    q = _against_plain(phases, "parked", "tollgate")
    n = parked["settings"]["parked"]
    versus = f"the plain phases' mean ({again})" if again else "the plain phase"
    return [*goals,
            Goal("parked memory", f"worker RSS <= {PARKED_RSS_MB} MB ({n:,} parked)",
                 f"{_f(rss, ' MB')} at most", _at_most(rss, PARKED_RSS_MB)),
            Goal("parked throughput", f"loss <= {PARKED_LOSS:.0%} ({n:,} parked)",
                 f"{_f(q)} x {versus}" + _skeleton_beside(phases, "parked"),
                 None if q is None else 1 - q <= PARKED_LOSS)]


def evaluate(report: dict[str, Any]) -> list[Goal]:
    """Every goal of issue 33, in the issue's order, from one report."""
    phases = report.get("phases") or {}
    return [*_pipeline_goals(phases.get("plain") or {}),
            *_history_goals(report.get("history_shape")),
            _replay_goal(report.get("replay")), *_scenario_goals(phases)]


def as_json(goals: list[Goal]) -> list[dict[str, Any]]:
    return [asdict(g) for g in goals]


def verdict_word(met: bool | None) -> str:
    return {True: "met", False: "NOT MET", None: "not run"}[met]


def render_goals(report: dict[str, Any]) -> list[str]:
    lines = [f"\n== goals (issue 33); {load_words(report.get('load'))}"]
    for g in evaluate(report):
        lines.append(f"  {verdict_word(g.met):8}{g.name:32}{g.figure}  (goal {g.goal})")
    return lines


def markdown(report: dict[str, Any]) -> str:
    """The goal table for docs/performance.md: one per run, with its commit and load."""
    env = report.get("environment") or {}
    rows = [f"Run at {env.get('commit')}, {report.get('started_at')}, "
            f"{load_words(report.get('load'))}.", "",
            "| goal | target | figure | met? |", "|---|---|---|---|"]
    rows += [f"| {g.name} | {g.goal} | {g.figure} | {verdict_word(g.met)} |"
             for g in evaluate(report)]
    return "\n".join(rows)
