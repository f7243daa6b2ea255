"""What the deployment files give the processes that face reviewers (ADR 0086): the ones that
check their tokens, and the HTTP service's links. ``tollgate dev``'s processes share one state
folder and its dev key; a deployment's containers each have their own, so without an issuer or
a shared key every decision was refused."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from tests.deploy.files import compose, container_env, k8s_documents, pod_spec
from tollgate.http.notifier import WILDCARD_HOSTS
from tollgate.runtime.identity import DEV_KEY_FILE

#: The roles that verify reviewers' tokens: the review API and inbox, and the review
#: update's validator in the main worker.
CHECKERS = ("main-worker", "http")


def test_compose_gives_the_checkers_the_laptops_dev_key() -> None:
    doc = compose()
    services = doc["services"]
    for name in CHECKERS:
        state_dir = services[name]["environment"]["TOLLGATE_STATE_DIR"]
        given = {s["target"]: s["source"] for s in services[name]["secrets"]}
        source = given.get(f"{state_dir}/{DEV_KEY_FILE}")
        assert source is not None, name
        assert doc["secrets"][source]["file"] == f"./secrets/{DEV_KEY_FILE}"


def test_k8s_checkers_name_an_issuer_and_may_reach_it() -> None:
    docs = k8s_documents()
    configmaps = {d["metadata"]["name"]: d["data"] for _, d in docs if d["kind"] == "ConfigMap"}
    components = {d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]: d
                  for _, d in docs if d["kind"] == "Deployment"}
    policies = [d["spec"] for _, d in docs if d["kind"] == "NetworkPolicy"]
    for name in CHECKERS:
        env = container_env(pod_spec(components[name])["containers"][0], configmaps)
        assert env.get("TOLLGATE_OIDC_ISSUER", "").startswith("https://"), name
        assert env.get("TOLLGATE_OIDC_AUDIENCE"), name
        out = [rule for p in policies if name in selected(p)
               for rule in p.get("egress", [])
               if {"protocol": "TCP", "port": 443} in rule.get("ports", [])]
        # Not the draft worker's way out to the model (the private ranges' exception).
        assert any(ipaddress.ip_network(to["ipBlock"]["cidr"]).is_private
                   for rule in out for to in rule["to"] if "ipBlock" in to), name


def selected(policy: dict) -> set[str]:  # type: ignore[type-arg]
    chosen = policy["podSelector"]
    labels = chosen.get("matchLabels", {})
    found = {labels["app.kubernetes.io/component"]} if "app.kubernetes.io/component" in labels \
        else set()
    for expr in chosen.get("matchExpressions", []):
        if expr["key"] == "app.kubernetes.io/component" and expr["operator"] == "In":
            found |= set(expr["values"])
    return found


def test_the_http_role_links_reviewers_to_an_address_they_reach() -> None:
    docs = k8s_documents()
    configmaps = {d["metadata"]["name"]: d["data"] for _, d in docs if d["kind"] == "ConfigMap"}
    [http] = [d for _, d in docs if d["kind"] == "Deployment"
              and d["metadata"]["name"] == "tollgate-http"]
    urls = [container_env(pod_spec(http)["containers"][0], configmaps)
            .get("TOLLGATE_PUBLIC_URL", ""),
            str(compose()["services"]["http"]["environment"].get("TOLLGATE_PUBLIC_URL", ""))]
    for url in urls:
        assert url.startswith(("https://", "http://")), urls
        assert urlsplit(url).hostname not in WILDCARD_HOSTS, urls
