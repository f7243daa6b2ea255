"""For the tests of the tenant's own contact points: acme's policy."""

from __future__ import annotations

from contracts.policy import PolicySnapshot
from policies.matrix import VERSIONS_DIR, load_matrix


def acme_policy() -> PolicySnapshot:
    snapshot = load_matrix(VERSIONS_DIR / "2026-12-01.json").rule_for("acme", "CARE_DUE")
    assert snapshot is not None
    return snapshot
