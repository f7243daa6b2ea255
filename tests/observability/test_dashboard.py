"""The on-call dashboard and the scrape config stay in step with the metrics the worker serves:
a panel naming a metric that does not exist would show an empty graph, not an alarm."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tollgate.metrics import families

ROOT = Path(__file__).resolve().parents[2]
EMPTY = {"events": [], "oldest": [], "receipts": [], "dead_letters": [], "quarantine": [],
         "past_sla": [], "switches": []}


def test_every_panel_queries_a_metric_the_worker_serves() -> None:
    served = {family.name for family in families(EMPTY)}
    dashboard = json.loads((ROOT / "deploy" / "grafana" / "tollgate.json").read_text())
    named = {name for panel in dashboard["panels"] for target in panel["targets"]
             for name in re.findall(r"\btollgate_[a-z_]+\b", target["expr"])}
    assert named, "the dashboard queries nothing"
    assert named <= served, f"panels name unknown metrics: {sorted(named - served)}"
    documented = (ROOT / "docs" / "metrics.md").read_text()
    assert all(f"`{name}`" in documented for name in served)


def test_the_scrape_config_points_at_the_metrics_path() -> None:
    config = (ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text()
    assert "metrics_path: /metrics" in config and ":9464" in config
