"""The alert rules and SLOs in deploy/prometheus/ load in Prometheus, fire on the series they
are for and stay quiet on the others (promtool's unit tests), and name only metrics the worker
serves: a rule on a misspelt metric would never fire."""

from __future__ import annotations

import re
from types import SimpleNamespace

import yaml
from prometheus_client import CollectorRegistry

from adapters.broker.redis_lag import StreamLag
from tests.deploy.alert_rules_support import RULES, promtool
from tests.observability.dashboard_support import served
from tollgate.runtime.redis_health import StreamFigures


def rules() -> list[dict[str, str]]:
    loaded = yaml.safe_load((RULES / "alerts.yml").read_text())
    return [rule for group in loaded["groups"] for rule in group["rules"]]


def test_the_rules_load_in_prometheus() -> None:
    checked = promtool("check", "rules", "alerts.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_each_alert_fires_on_its_series_and_not_on_the_others() -> None:
    tested = promtool("test", "rules", "alerts_test.yml")
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_alert_has_a_case_that_fires_and_one_that_does_not() -> None:
    cases = yaml.safe_load((RULES / "alerts_test.yml").read_text())["tests"]
    checks = [check for case in cases for check in case.get("alert_rule_test", [])]
    for alert in (rule["alert"] for rule in rules() if "alert" in rule):
        outcomes = {bool(c.get("exp_alerts")) for c in checks if c["alertname"] == alert}
        assert outcomes == {True, False}, f"{alert}: tested firing and quiet? {outcomes}"


def test_the_issue_29_alerts_are_there() -> None:
    alerts = {rule["alert"] for rule in rules() if "alert" in rule}
    assert {"TollgateStateAging", "TollgateDeadLettersGrowing", "TollgateUnknownWritesOpen",
            "TollgateDuplicateSignal", "TollgateOutboxStall", "TollgateReviewsPastSla",
            "TollgateCircuitClosed"} <= alerts


def redis_intake_serves() -> set[str]:
    """What a Redis Streams consumer serves on its health port (every figure present)."""
    consumer = SimpleNamespace(stream="events", group="tollgate",
                               outage=SimpleNamespace(since=None))
    lag = StreamLag(pending=1, oldest_pending_age_s=2.0, unread=3, dead_letters=4)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StreamFigures(consumer, lag))  # type: ignore[arg-type]
    return {family.name for family in registry.collect()}


def test_rules_name_only_metrics_the_worker_or_the_redis_intake_serves() -> None:
    serving = served() | redis_intake_serves()
    named = {name for rule in rules()
             for name in re.findall(r"\btollgate_[a-z_]+\b", rule["expr"])}
    assert named and named <= serving, sorted(named - serving)
    assert {"tollgate_redis_oldest_pending_age_seconds", "tollgate_redis_outage",
            "tollgate_redis_dead_letters"} <= named
