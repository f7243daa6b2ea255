"""The events a bench run sends: signed CARE_DUE events, each for a customer of its own (so
none supersedes another), keyed by the run's start time and a serial so that runs and phases
on one server never share a key."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from policies.signing import sign_json
from tollgate.bench.reviewer import TENANT
from tollgate.bench.tally import Phase
from tollgate.dev.demo import care_due
from tollgate.dev.stack import DevStack


class Events:
    """Makes the run's events; one per run, so the serial never repeats."""

    def __init__(self, stack: DevStack, secrets: dict[str, str]) -> None:
        self.stack, self.secrets = stack, secrets
        self.serial = 0
        self.run_tag = datetime.now(UTC).strftime("%H%M%S")

    def make(self, pipeline: str, phase: Phase, n: int,
             tenant: str = TENANT) -> list[tuple[str, str]]:
        """n signed CARE_DUE events, each for a customer of its own (so none supersedes
        another), as (workflow id, raw JSON)."""
        now = datetime.now(UTC)
        assert self.stack.standins is not None
        crm = self.stack.standins.crm
        events = []
        for _ in range(n):
            self.serial += 1
            customer = f"B-{self.run_tag}-{self.serial}"
            key = f"bench-{self.run_tag}-{phase.name}-{pipeline}-{self.serial}"
            crm.upsert(tenant, customer, first_name="Sam", pet_name="Rex",
                       consent_messaging=True, updated_at=now - timedelta(hours=1))
            raw = sign_json(json.dumps(care_due(tenant, customer, key, now=now)), self.secrets)
            wf_id = (f"event/{tenant}/{key}" if pipeline == "tollgate"
                     else f"bench-{pipeline}/{tenant}/{key}")
            events.append((wf_id, raw))
        return events
