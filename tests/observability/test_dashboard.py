"""The on-call dashboard and the scrape config stay in step with the metrics the worker serves:
a panel naming a metric that does not exist would show an empty graph, not an alarm."""

from __future__ import annotations

import json
import re

from tests.observability.dashboard_support import EMPTY, ROOT, dashboard_names, served
from tollgate.observability.metric_families import families


def test_every_panel_queries_a_metric_the_worker_serves() -> None:
    named = dashboard_names("tollgate_")
    assert named, "the dashboard queries nothing"
    assert named <= served(), f"panels name unknown metrics: {sorted(named - served())}"


def test_every_metric_is_documented_with_its_scraped_name() -> None:
    documented = (ROOT / "docs" / "metrics.md").read_text()
    missing = {family.name for family in families(EMPTY)
               if f"`{family.name}{'_total' if family.type == 'counter' else ''}`"
               not in documented}
    assert missing == set()


def test_the_dashboard_charts_the_issue_11_figures() -> None:
    named = dashboard_names("tollgate_") | dashboard_names("temporal_")
    assert {"tollgate_review_latency_seconds_bucket", "tollgate_unknown_writes_opened_total",
            "tollgate_duplicates_prevented_total",
            "temporal_workflow_task_schedule_to_start_latency_seconds_bucket"} <= named


def test_the_unknown_writes_open_panel_reads_what_ops_status_counts() -> None:
    # It read tollgate_receipts{status="UNKNOWN"}, which still counts writes moved aside to a
    # dead letter or closed by hand (ADRs 0059, 0060): N open after all were in hand.
    dashboard = json.loads((ROOT / "deploy" / "grafana" / "tollgate.json").read_text())
    [panel] = [p for p in dashboard["panels"] if p["title"] == "Unknown writes open"]
    read = {name for target in panel["targets"]
            for name in re.findall(r"\btollgate_[a-z_]+\b", target["expr"])}
    assert read == {"tollgate_open_unknown_writes"} and read <= served()
    assert "tollgate_open_unknown_writes" in panel["description"]


def test_the_dashboard_shows_the_slos_the_rules_record() -> None:
    dashboard = json.loads((ROOT / "deploy" / "grafana" / "tollgate.json").read_text())
    charted = {name for panel in dashboard["panels"] for target in panel["targets"]
               for name in re.findall(r"\btollgate:[a-z0-9_:]+", target["expr"])}
    rules = (ROOT / "deploy" / "prometheus" / "alerts.yml").read_text()
    recorded = set(re.findall(r"record: (tollgate:[a-z0-9_:]+)", rules))
    assert {"tollgate:review_within_4h:ratio_1d",
            "tollgate:unknown_write_settled_15m:ratio_1d"} <= charted
    assert charted <= recorded, f"panels chart rules nobody records: {charted - recorded}"


def test_the_scrape_config_points_at_the_metrics_path() -> None:
    config = (ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text()
    assert "metrics_path: /metrics" in config and ":9464" in config and ":9465" in config


#: ``sum`` (by anything) taken straight over a Tollgate series, or over its rate or increase.
_SUM_OF_RAW = re.compile(r"\bsum\b(?:\s+by\s*\([^)]*\))?\s*\(\s*(?:(?:rate|increase|irate)\s*\()?"
                         r"\s*tollgate_[a-z_]+")


def test_no_panel_adds_up_what_every_worker_reports_alike() -> None:
    # Every worker serves the same PostgreSQL-backed figures (docs/metrics.md): a sum across
    # instances doubles with two workers. The outbox panels did so; the others take max first.
    dashboard = json.loads((ROOT / "deploy" / "grafana" / "tollgate.json").read_text())
    summed = [target["expr"] for panel in dashboard["panels"]
              for target in panel.get("targets", []) if _SUM_OF_RAW.search(target["expr"])]
    assert summed == []
