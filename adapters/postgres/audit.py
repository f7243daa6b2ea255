"""The tamper-evident audit chain (migration 0041): read an event's chain and recompute it.

Triggers in PostgreSQL append one entry per row written to ``state_transitions``,
``review_decisions``, ``receipts`` and ``tenant_contacts``; this module only reads.
Recomputing is done here, in Python, so a verifier does not trust functions an intruder with
database access could replace: only the canonical row text comes from PostgreSQL
(``audit_row_json``, always UTC).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from asyncpg.transaction import Transaction

#: The chained tables and the column that names a row within its event (a tenant's contact
#: points chain under ``contacts/<tenant>``: migration 0095).
CHAINED = {"state_transitions": "seq", "review_decisions": "decision_key",
           "receipts": "action_key", "tenant_contacts": "id"}

#: How many head shards each tenant's chains are counted under (migration 0132).
HEAD_SHARDS = 8

#: Chains recomputed per batch of reads: what a verification holds in memory at once, whatever
#: the size of the whole chain (about 1 kB per entry: 160,000 entries read at once took 176 MB
#: of Python's memory, in batches 12 MB).
VERIFY_BATCH = 1000

#: The chain ids a verification covers: every one with entries or an event row, of the tenant
#: ``$1`` (NULL: of every tenant). The tenant's entries are found through
#: ``audit_chain_tenant_shard`` (ADR 0089).
CHAIN_IDS_SQL = ("SELECT DISTINCT workflow_id FROM ("
                 " SELECT workflow_id, tenant_id FROM audit_chain"
                 " UNION SELECT workflow_id, tenant_id FROM events) w"
                 " WHERE $1::text IS NULL OR tenant_id = $1")


@dataclass(frozen=True)
class AuditProblem:
    """One place where the stored rows and their chain disagree."""

    workflow_id: str
    source: str
    row_key: str
    problem: str

    def line(self) -> str:
        return f"{self.workflow_id} {self.source} {self.row_key}: {self.problem}"


def row_digest(source: str, row_json: str) -> bytes:
    return hashlib.sha256(f"{source}:{row_json}".encode()).digest()


def link(prev: bytes | None, digest: bytes) -> bytes:
    return hashlib.sha256((prev or b"") + digest).digest()


class AuditStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def chain(self, workflow_id: str) -> list[dict[str, Any]]:
        """The event's chain entries in order (what ``tollgate trace`` prints)."""
        rows = await self.pool.fetch(
            "SELECT n, source, row_key, op, encode(hash, 'hex') AS hash, at FROM audit_chain"
            " WHERE workflow_id = $1 ORDER BY n", workflow_id)
        return [dict(r) for r in rows]

    async def verify_event(self, workflow_id: str) -> list[AuditProblem]:
        """Recompute one event's chain against its rows; no problem means intact."""
        async with self.pool.acquire() as conn, _snapshot(conn):
            return await _verify(conn, [workflow_id])

    async def verify_all(self, tenant_id: str | None = None) -> tuple[int, list[AuditProblem]]:
        """Every event's chain (of one tenant, or all) and each tenant's heads (one per shard),
        read in one snapshot, ``VERIFY_BATCH`` chains at a time.

        Returns:
            The number of events checked and the problems found.
        """
        async with self.pool.acquire() as conn, _snapshot(conn):
            wf_rows = await conn.fetch(CHAIN_IDS_SQL, tenant_id)
            workflows = sorted(r["workflow_id"] for r in wf_rows)
            problems: list[AuditProblem] = []
            for start in range(0, len(workflows), VERIFY_BATCH):
                problems += await _verify(conn, workflows[start:start + VERIFY_BATCH])
            problems += await _verify_heads(conn, tenant_id)
        return len(workflows), problems


def _snapshot(conn: PoolConnectionProxy) -> Transaction:
    """One read-only snapshot for every read of a check: a row written while it runs is seen
    with its entry or not at all, never as a row its chain does not have yet."""
    return conn.transaction(isolation="repeatable_read", readonly=True)


async def _verify(conn: PoolConnectionProxy, workflows: list[str]) -> list[AuditProblem]:
    problems: list[AuditProblem] = []
    entries = await conn.fetch(
        "SELECT workflow_id, n, source, row_key, row_digest, prev_hash, hash FROM audit_chain"
        " WHERE workflow_id = ANY($1::text[]) ORDER BY workflow_id, n", workflows)
    # The newest entry of each row is what the row must look like now.
    latest: dict[tuple[str, str, str], bytes] = {}
    prev: dict[str, tuple[int, bytes]] = {}
    for e in entries:
        wf, key = e["workflow_id"], (e["workflow_id"], e["source"], e["row_key"])
        last_n, last_hash = prev.get(wf, (0, None))
        if e["n"] != last_n + 1 or e["prev_hash"] != last_hash:
            problems.append(AuditProblem(wf, e["source"], e["row_key"],
                                         f"chain broken before entry {e['n']} (an entry was "
                                         "deleted or reordered)"))
        if link(e["prev_hash"], e["row_digest"]) != e["hash"]:
            problems.append(AuditProblem(wf, e["source"], e["row_key"],
                                         f"chain entry {e['n']} was edited"))
        prev[wf] = (e["n"], e["hash"])
        latest[key] = e["row_digest"]
    seen: set[tuple[str, str, str]] = set()
    for source, key_col in CHAINED.items():
        rows = await conn.fetch(
            f"SELECT t.workflow_id, t.{key_col}::text AS row_key, audit_row_json(t) AS js"
            f" FROM {source} t WHERE t.workflow_id = ANY($1::text[])", workflows)
        for r in rows:
            key = (r["workflow_id"], source, r["row_key"])
            seen.add(key)
            digest = latest.get(key)
            if digest is None:
                problems.append(AuditProblem(*key, "row is not in the chain (written with the "
                                                    "triggers off)"))
            elif digest != row_digest(source, r["js"]):
                problems.append(AuditProblem(*key, "row was edited after it was chained"))
    for key in latest.keys() - seen:
        problems.append(AuditProblem(*key, "row was deleted"))
    return sorted(problems, key=lambda p: (p.workflow_id, p.source, p.row_key, p.problem))


async def _verify_heads(conn: PoolConnectionProxy, tenant_id: str | None) -> list[AuditProblem]:
    # One head per (tenant, shard) (migration 0132): each is held to its own shard's rows, so a
    # whole event's chain deleted shows at the head of the shard the event belongs to.
    rows = await conn.fetch(
        "SELECT h.tenant_id, h.shard, h.entries, h.head_hash,"
        " (SELECT count(*) FROM audit_chain c"
        "  WHERE c.tenant_id = h.tenant_id AND c.shard = h.shard) AS counted,"
        " (SELECT c.hash FROM audit_chain c WHERE c.tenant_id = h.tenant_id AND c.shard = h.shard"
        "  ORDER BY c.id DESC LIMIT 1) AS newest"
        " FROM audit_chain_heads h WHERE $1::text IS NULL OR h.tenant_id = $1"
        " ORDER BY h.tenant_id, h.shard", tenant_id)
    problems = []
    for r in rows:
        if r["entries"] != r["counted"] or r["head_hash"] != r["newest"]:
            problems.append(AuditProblem(
                f"tenant/{r['tenant_id']}", "audit_chain_heads", r["tenant_id"],
                f"head says {r['entries']} entries, the chains hold {r['counted']} in shard"
                f" {r['shard']} (whole entries were deleted or added)"))
    return problems


def chain_shard(workflow_id: str) -> int:
    """The head shard of a chain id, as ``audit_chain_shard`` (migration 0132) computes it."""
    return hashlib.sha256(workflow_id.encode()).digest()[0] % HEAD_SHARDS
