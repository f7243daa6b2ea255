"""The compose Prometheus loads the alert rules that promtool tests: its config names a rule
file, every rule file it names is mounted into the container from the checkout, and the
alerts among them are deploy/prometheus/alerts.yml. Then promtool checks the config as the
container sees it (config and rules laid out at their container paths)."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from tests.deploy.alert_rules_support import promtool
from tests.deploy.files import COMPOSE, DEPLOY, compose

ALERTS = DEPLOY / "prometheus" / "alerts.yml"
#: The prom/prometheus image's default ``--config.file`` when the service sets no command.
IMAGE_CONFIG = PurePosixPath("/etc/prometheus/prometheus.yml")


def mounts(service: dict[str, Any]) -> dict[PurePosixPath, Path]:
    """Container path -> the checkout's file, for the service's bind mounts."""
    found = {}
    for volume in service.get("volumes", []):
        source, target = (volume.split(":")[:2] if isinstance(volume, str)
                          else (volume["source"], volume["target"]))
        if source.startswith((".", "/")):
            found[PurePosixPath(target)] = (COMPOSE.parent / source).resolve()
    return found


def config_path(service: dict[str, Any]) -> PurePosixPath:
    command = service.get("command", [])
    flags = [arg.split("=", 1)[1] for arg in command if arg.startswith("--config.file=")]
    return PurePosixPath(flags[0]) if flags else IMAGE_CONFIG


def rule_files(service: dict[str, Any]) -> tuple[dict[str, Any], list[PurePosixPath]]:
    """The mounted config and the container paths of the rule files it names (relative ones
    resolved against the config's folder, as Prometheus does)."""
    config_file = config_path(service)
    mounted = mounts(service)
    if config_file not in mounted:
        raise AssertionError(f"no file mounted at {config_file}")
    config = yaml.safe_load(mounted[config_file].read_text())
    named = [PurePosixPath(name) for name in config.get("rule_files") or []]
    return config, [name if name.is_absolute() else config_file.parent / name
                    for name in named]


def rule_problems(data: dict[str, Any]) -> list[str]:
    """What keeps the compose Prometheus from evaluating Tollgate's alerts (empty: nothing)."""
    service = data["services"]["prometheus"]
    _, named = rule_files(service)
    mounted = mounts(service)
    problems = [] if named else ["the Prometheus config names no rule file"]
    problems += [f"{path} is named but not mounted" for path in named if path not in mounted]
    problems += [f"{path} is mounted from {mounted[path]}, which does not exist"
                 for path in named if path in mounted and not mounted[path].is_file()]
    if ALERTS.resolve() not in {mounted.get(path) for path in named}:
        problems.append(f"{ALERTS.relative_to(DEPLOY.parent)} is not among the rule files")
    return problems


def test_the_compose_prometheus_loads_the_alert_rules() -> None:
    assert rule_problems(compose()) == []


def test_a_config_without_rules_or_a_rule_file_not_mounted_is_caught(tmp_path: Path) -> None:
    service = compose()["services"]["prometheus"]
    config, _ = rule_files(service)
    bare = tmp_path / "prometheus.yml"
    bare.write_text(yaml.safe_dump({k: v for k, v in config.items() if k != "rule_files"}))
    no_rules = copy.deepcopy(compose())
    no_rules["services"]["prometheus"]["volumes"] = [
        f"{bare}:{config_path(service)}:ro" if str(v).endswith(f":{config_path(service)}:ro")
        else v for v in service["volumes"]]
    assert "the Prometheus config names no rule file" in rule_problems(no_rules)

    unmounted = copy.deepcopy(compose())
    unmounted["services"]["prometheus"]["volumes"] = [
        v for v in service["volumes"] if "alerts.yml" not in str(v)]
    assert any("is named but not mounted" in p for p in rule_problems(unmounted))


def test_promtool_checks_the_config_as_the_container_sees_it(tmp_path: Path) -> None:
    service = compose()["services"]["prometheus"]
    for target, source in mounts(service).items():
        placed = tmp_path / target.relative_to("/")
        placed.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, placed)
    config_file = tmp_path / config_path(service).relative_to("/")
    config = yaml.safe_load(config_file.read_text())
    # Relative rule paths resolve as in the container; absolute ones point into it, so here
    # they are read under tmp_path.
    config["rule_files"] = [str(tmp_path / name.lstrip("/")) if name.startswith("/") else name
                            for name in config.get("rule_files") or []]
    config_file.write_text(yaml.safe_dump(config))
    checked = promtool("check", "config", str(config_file))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 1 rule files found" in checked.stdout + checked.stderr
