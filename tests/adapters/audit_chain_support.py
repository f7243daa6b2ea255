"""For the audit chain's tests: event ids that land in given shards."""

from __future__ import annotations

from adapters.postgres.audit import chain_shard


def event_ids_in_shards(tenant: str, shards: list[int], stem: str = "evt-") -> list[str]:
    """Distinct event ids ``STEMn`` whose chain ids (``event/TENANT/ID``) fall in the given head
    shards, in order."""
    ids: list[str] = []
    for shard in shards:
        i = 0
        while f"{stem}{i}" in ids or chain_shard(f"event/{tenant}/{stem}{i}") != shard:
            i += 1
        ids.append(f"{stem}{i}")
    return ids
