"""Reading the deployment files and the environment variables the code reads."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose" / "compose.yaml"
K8S = DEPLOY / "k8s"
SHIPPED = ("contracts", "policies", "adapters", "activities", "workflows", "tollgate",
           "worker.py", "starter.py")
_ENV_NAME = re.compile(r"^(TOLLGATE_[A-Z0-9_]+|TEMPORAL_[A-Z0-9_]+|DATABASE_URL|"
                       r"(OPENAI|ANTHROPIC)_(API_KEY|BASE_URL))$")
#: Read by temporalio's environment configuration (tollgate/runtime/client.py), not by our code.
TEMPORAL_CLIENT_VARS = frozenset({
    "TEMPORAL_CONFIG_FILE", "TEMPORAL_PROFILE", "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE",
    "TEMPORAL_API_KEY", "TEMPORAL_TLS", "TEMPORAL_TLS_CLIENT_CERT_PATH",
    "TEMPORAL_TLS_CLIENT_KEY_PATH", "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
    "TEMPORAL_TLS_SERVER_NAME"})


def env_vars_read_by_code() -> set[str]:
    """Every string constant in the shipped code that names an environment variable."""
    found: set[str] = set(TEMPORAL_CLIENT_VARS)
    for entry in SHIPPED:
        path = ROOT / entry
        files = [path] if path.is_file() else sorted(path.rglob("*.py"))
        for file in files:
            for node in ast.walk(ast.parse(file.read_text(), str(file))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and _ENV_NAME.match(node.value):
                    found.add(node.value)
    return found


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load(COMPOSE.read_text()))


def k8s_documents() -> list[tuple[Path, dict[str, Any]]]:
    docs = []
    for file in sorted(K8S.glob("*.yaml")):
        if file.name in ("kustomization.yaml", "temporal-values.yaml"):
            continue
        docs += [(file, d) for d in yaml.safe_load_all(file.read_text()) if d]
    return docs


def pod_spec(doc: dict[str, Any]) -> dict[str, Any]:
    spec = doc["spec"]["template"]["spec"]
    return dict(spec)


def container_env(container: dict[str, Any], configmaps: dict[str, dict[str, str]]
                  ) -> dict[str, str]:
    """Name -> value ("<secret>" for secret references) as the container sees it."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env.update(configmaps[source["configMapRef"]["name"]])
    for item in container.get("env", []):
        ref = item.get("valueFrom", {}).get("configMapKeyRef")
        env[item["name"]] = (configmaps[ref["name"]][ref["key"]] if ref else
                             item.get("value", "<secret>" if "valueFrom" in item else ""))
    return env
