"""For the dashboard and alert tests: the metric names the dashboard queries, and the sample
names the metric families expose."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tollgate.observability.metric_families import KEYS, families

ROOT = Path(__file__).resolve().parents[2]
EMPTY: dict[str, list[dict[str, object]]] = {key: [] for key in KEYS}
#: The sample names each family type exposes (a counter family ``x`` is scraped as ``x_total``).
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}


def served() -> set[str]:
    return {family.name + suffix for family in families(EMPTY)
            for suffix in SUFFIXES[family.type]}


def dashboard_names(prefix: str) -> set[str]:
    dashboard = json.loads((ROOT / "deploy" / "grafana" / "tollgate.json").read_text())
    return {name for panel in dashboard["panels"] for target in panel["targets"]
            for name in re.findall(rf"\b{prefix}[a-z_]+\b", target["expr"])}
