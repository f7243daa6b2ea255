"""Tollgate's PostgreSQL-backed metric families, built from one read of ``MetricsStore``.

Names, types and labels here are what docs/metrics.md lists and the dashboard charts
(``tests/observability/test_dashboard.py`` keeps the three in step). Figures that only grow
(rows are never deleted) are counters; the rest are gauges; latencies are histograms whose
buckets PostgreSQL counted.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

#: Every key ``families`` reads: a store read (or a test) supplies each, empty when nothing.
KEYS = ("events", "oldest", "receipts", "unknown_writes", "stale_replays", "dead_letters",
        "quarantine", "reviews", "past_sla", "switches", "duplicates", "conflicts",
        "validation", "replays", "closures", "unknown", "review_latency", "recover", "outbox",
        "held", "failing_steps", "notices")


def _family(name: str, doc: str, labels: list[str], rows: list[dict[str, Any]],
            value: str = "n", counter: bool = False) -> Metric:
    family = (CounterMetricFamily if counter else GaugeMetricFamily)(name, doc, labels=labels)
    for row in rows:
        family.add_metric([str(row[label]) for label in labels], float(row[value] or 0))
    return family


def _histogram(name: str, doc: str, labels: list[str],
               rows: list[dict[str, Any]]) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc, labels=labels)
    for row in rows:
        buckets = [(repr(float(b)), float(n)) for b, n in row["buckets"]]
        buckets.append(("+Inf", float(row["count"])))
        family.add_metric([str(row[label]) for label in labels], buckets,
                          sum_value=row["sum"])
    return family


def families(g: Mapping[str, list[dict[str, Any]]]) -> Iterator[Metric]:
    yield _family("tollgate_events", "Events by tenant and current state.",
                  ["tenant_id", "state"], g["events"])
    yield _family("tollgate_state_oldest_age_seconds",
                  "Age of the oldest record in each state a record leaves on its own.",
                  ["state"], g["oldest"], value="age")
    yield _family("tollgate_receipts", "Receipts by tenant, adapter and status.",
                  ["tenant_id", "adapter", "status"], g["receipts"])
    # What ``ops status`` counts: a write moved aside or closed by hand keeps its receipt
    # UNKNOWN in ``tollgate_receipts`` for good, but is not open (ADRs 0059, 0060).
    yield _family("tollgate_open_unknown_writes",
                  "Unknown writes open (not moved aside to a dead letter), by tenant and "
                  "adapter.", ["tenant_id", "adapter"], g["unknown_writes"], value="open")
    yield _family("tollgate_unknown_writes_moved_aside",
                  "Unknown writes moved aside to a dead letter that awaits a person, by tenant "
                  "and adapter.", ["tenant_id", "adapter"], g["unknown_writes"], value="aside")
    yield _family("tollgate_unknown_writes_closed_by_hand",
                  "Unknown writes whose dead letter a person closed (off the books), by tenant "
                  "and adapter.", ["tenant_id", "adapter"], g["unknown_writes"], value="closed")
    # REPLAYED with the write still open and the replay over: in no queue (ADRs 0066, 0069).
    yield _family("tollgate_stale_replays",
                  "Replayed dead letters in no queue (the write still open, the replay over), "
                  "by tenant and adapter.", ["tenant_id", "adapter"], g["stale_replays"])
    yield _family("tollgate_dead_letters", "Dead letters by tenant, reason code and status.",
                  ["tenant_id", "error_code", "status"], g["dead_letters"])
    yield _family("tollgate_quarantined", "Quarantined deliveries by reason code.",
                  ["reason_code"], g["quarantine"])
    yield _family("tollgate_outbox_depth",
                  "Outbox rows waiting for the relay (not sent, moved aside or dropped), "
                  "by tenant.", ["tenant_id"], g["outbox"], value="depth")
    yield _family("tollgate_outbox_oldest_age_seconds",
                  "Age of the oldest outbox row waiting for the relay, by tenant.",
                  ["tenant_id"], [r for r in g["outbox"] if r["depth"]], value="oldest_age_s")
    yield _family("tollgate_outbox_moved_aside",
                  "Outbox rows moved aside after their bounded tries, not yet retried or "
                  "dropped, by tenant.", ["tenant_id"], g["outbox"], value="moved_aside")
    yield _family("tollgate_reviews_waiting", "Reviews open now, by tenant.",
                  ["tenant_id"], g["reviews"], value="waiting")
    yield _family("tollgate_reviews_past_sla", "Reviews waiting past their SLA, by tenant.",
                  ["tenant_id"], g["past_sla"])
    yield _family("tollgate_held_runs",
                  "Runs held now, by what holds them (a kill switch or the gate).",
                  ["held_by"], g["held"])
    yield _family("tollgate_failing_steps",
                  "Steps failing try after try (3 tries or more) and still retried, by step.",
                  ["step"], g["failing_steps"])
    yield _family("tollgate_review_notices_undelivered",
                  "Reviewer notices not delivered: given_up, unknown, retrying.",
                  ["status"], g["notices"])
    switches = GaugeMetricFamily("tollgate_kill_switch_closed",
                                 "1 when the kill switch for (adapter, tenant) is closed.",
                                 labels=["adapter", "tenant_id"])
    for row in g["switches"]:
        switches.add_metric([row["adapter"], row["tenant_id"]], 1.0 if row["closed"] else 0.0)
    yield switches
    yield _family("tollgate_duplicates_prevented",
                  "Deliveries answered as duplicates, by tenant, where (http, update, gate) "
                  "and when (in_flight or after_close).",
                  ["tenant_id", "channel", "stage"], g["duplicates"], counter=True)
    yield _family("tollgate_idempotency_conflicts",
                  "Deliveries reusing a key with another payload (quarantined), by tenant.",
                  ["tenant_id"], g["conflicts"], counter=True)
    yield _family("tollgate_validation_failures",
                  "Drafts the validator refused, by tenant and finding code.",
                  ["tenant_id", "reason"], g["validation"], counter=True)
    yield _family("tollgate_dlq_replays", "Dead-letter replays by tenant and result.",
                  ["tenant_id", "result"], g["replays"], counter=True)
    yield _family("tollgate_circuit_closures",
                  "Kill switches the circuit closed, by adapter, tenant and rule.",
                  ["adapter", "tenant_id", "rule"], g["closures"], counter=True)
    yield _family("tollgate_unknown_writes_opened",
                  "Events whose write became UNKNOWN, by tenant and adapter.",
                  ["tenant_id", "adapter"], _sum_by(g["unknown"], ("tenant_id", "adapter")),
                  counter=True)
    yield _family("tollgate_unknown_writes_settled",
                  "Unknown writes that reached an end, by tenant, adapter and end state.",
                  ["tenant_id", "adapter", "outcome"],
                  [r for r in g["unknown"] if r["outcome"] != "open"], counter=True)
    yield _histogram("tollgate_review_latency_seconds",
                     "Review opened to the reviewer's decision, by tenant.",
                     ["tenant_id"], g["review_latency"])
    yield _histogram("tollgate_unknown_write_recover_seconds",
                     "Unknown write to its end state, by tenant and adapter.",
                     ["tenant_id", "adapter"], g["recover"])


def _sum_by(rows: list[dict[str, Any]], labels: tuple[str, ...]) -> list[dict[str, Any]]:
    totals: dict[tuple[Any, ...], float] = {}
    for row in rows:
        key = tuple(row[label] for label in labels)
        totals[key] = totals.get(key, 0) + float(row["n"])
    return [{**dict(zip(labels, key, strict=True)), "n": n} for key, n in totals.items()]
