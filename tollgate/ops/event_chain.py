"""The whole chain of one event, from PostgreSQL and Temporal together (``tollgate trace``,
and the tail of ``tollgate review show`` for finished events).

PostgreSQL gives the rows (``adapters/postgres/trace.py``); Temporal gives each run (the event
workflow, a reconciler per receipt, a dead letter's replay) with its status and a Web UI link.
Temporal being down still leaves the PostgreSQL part, marked so.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tollgate.config.settings import Settings, read_endpoints

if TYPE_CHECKING:
    from temporalio.client import Client

DEFAULT_UI = "http://127.0.0.1:8233"
#: States a gate decision moves an event out of.
_GATE_FROM = {"DRAFTED", "HELD_AT_GATE"}


def ui_base(s: Settings) -> str:
    """The Web UI: ``TOLLGATE_UI_URL``, else the running ``tollgate dev``, else the default."""
    return (s.cli.ui_url or read_endpoints(s.state_dir).get("ui")
            or DEFAULT_UI).rstrip("/")


def ui_link(s: Settings, workflow_id: str, run_id: str) -> str:
    return (f"{ui_base(s)}/namespaces/{quote(s.namespace, safe='')}/workflows/"
            f"{quote(workflow_id, safe='')}/{quote(run_id, safe='')}/history")


def context_fields(policy_version: str | None, tenant: str, event_type: str) -> list[dict[str,
                                                                                          str]]:
    """The context facts the event's policy rule let the context step read: names and sources,
    never their values. Empty when that release is not in ``policies/versions`` any more."""
    from policies.matrix import VERSIONS_DIR, load_matrix

    if not policy_version:
        return []
    for path in sorted(VERSIONS_DIR.glob("*.json")):
        matrix = load_matrix(path)
        if matrix.version != policy_version:
            continue
        snapshot = matrix.rule_for(tenant, event_type)
        fields = (snapshot.rule.context_fields or ()) if snapshot else ()
        return [{"source": f.split(".", 1)[0], "name": f.split(".", 1)[1]} for f in fields]
    return []


async def runs(client: Client | None, s: Settings, chain: dict[str, Any],
               workflow_id: str) -> list[dict[str, Any]]:
    """Each Temporal run of the event: the event workflow, reconcilers, replays."""
    ids = [workflow_id] + [f"reconcile/{r['action_key']}" for r in chain["receipts"]]
    ids += [d["replayed_workflow_id"] for d in chain["dead_letters"] if d["replayed_workflow_id"]]
    if client is None:
        return [{"workflow_id": i, "status": "Temporal unreachable"} for i in ids[:1]]
    from temporalio.service import RPCError, RPCStatusCode

    from tollgate.intake.repeat import ended_without_outcome
    from tollgate.ops.target_queues import waits_for_worker

    found = []
    for wf in ids:
        try:
            desc = await client.get_workflow_handle(wf).describe()
        except RPCError as exc:
            if exc.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
                continue  # never started (no unknown write) or past retention
            raise
        status = desc.status.name if desc.status else "UNKNOWN"
        # A send, or a reconciler's lookup, may wait with no timeout on a target queue no
        # worker polls: said as `ops state` says it, for each running run.
        waits = ({"waits_for": await waits_for_worker(client, desc)} if status == "RUNNING"
                 else {})
        found.append({"workflow_id": wf, "run_id": desc.run_id, "status": status,
                      "ended": ended_without_outcome(desc.status),
                      "started_at": desc.start_time, "closed_at": desc.close_time,
                      "ui": ui_link(s, wf, desc.run_id)} | waits)
    return found


def assemble(workflow_id: str, chain: dict[str, Any], temporal: list[dict[str, Any]]
             ) -> dict[str, Any]:
    """The chain as ``--json`` prints it and the text rendering reads it."""
    event, quarantine = chain["event"] or {}, chain["quarantine"]
    transitions = chain["transitions"]
    intake = next((t for t in transitions if t["from_state"] == "RECEIVED"), None)
    # No events row: refused at intake, quarantined (invalid) or dead-lettered (a retired
    # schema version); the envelope then comes from that row and its redacted copy.
    refused = quarantine or (chain["dead_letters"][0] if chain["dead_letters"] else {})
    end, reason = _refusal(event, quarantine, chain["dead_letters"])
    envelope = {k: event.get(k, refused.get(k)) for k in (
        "event_id", "tenant_id", "event_type", "schema_version", "occurred_at", "received_at",
        "correlation_id", "payload_fingerprint")}
    if not event and not quarantine and refused:
        envelope["received_at"] = refused.get("created_at")
    return {
        "workflow_id": workflow_id, "state": event.get("state") or end,
        "reason_code": event.get("reason_code") or reason,
        "envelope": {**envelope, "occurred_at": _when(envelope["occurred_at"]),
                     "trace_id": envelope.pop("correlation_id")},
        "intake": ({"outcome": intake["to_state"], "reason": intake["reason"]} if intake
                   else {"outcome": end, "reason": reason}),
        "context_fields": context_fields(event.get("policy_version"),
                                         event.get("tenant_id", ""), event.get("event_type", "")),
        "drafts": chain["drafts"],
        "policy_version": event.get("policy_version"),
        "gate": [t for t in transitions if t["from_state"] in _GATE_FROM],
        "decisions": chain["decisions"], "receipts": chain["receipts"],
        "dead_letters": chain["dead_letters"], "transitions": transitions,
        "hold": _hold(chain.get("hold")), "failing_steps": chain.get("failing_steps", []),
        "runs": temporal,
    }


def _hold(hold: dict[str, Any] | None) -> dict[str, Any] | None:
    from tollgate.ops.holds import wakes

    return None if hold is None else {**hold, "wakes": wakes(hold["held_by"],
                                                             released=hold["released"])}


def _refusal(event: dict[str, Any], quarantine: dict[str, Any] | None,
             dead: list[dict[str, Any]]) -> tuple[str, str | None]:
    """How intake ended an event that has no transition out of RECEIVED."""
    if quarantine or (not dead and not event):
        return "QUARANTINED", (quarantine or {}).get("reason_code")
    return "DEAD_LETTERED", dead[0]["error_code"] if dead else None


def _when(value: datetime | str | None) -> datetime | None:
    # A redacted copy keeps occurred_at as the producer's text; shown only when it parses.
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return value


def _at(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d %H:%M:%S}" if value else "-"


def render(t: dict[str, Any]) -> list[str]:
    """The text lines of ``tollgate trace``."""
    e = t["envelope"]
    version = f" v{e['schema_version']}" if e["schema_version"] else ""
    from tollgate.ops.review_ticket import ended_state
    from tollgate.ops.target_queues import said

    # A run terminated by hand (or failed) keeps the state it stopped in: the header says so.
    ended = next((r.get("ended") for r in t["runs"] if r["workflow_id"] == t["workflow_id"]),
                 None)
    lines = [f"{t['workflow_id']}  {ended_state(t['state'], ended)}"
             + (f" ({t['reason_code']})" if t["reason_code"] else ""),
             f"  envelope  {e['event_id'] or '-'} · {e['event_type'] or '-'}{version}"
             f" · occurred {_at(e['occurred_at'])} · trace {e['trace_id'] or '-'}"
             f" · fingerprint {(e['payload_fingerprint'] or '-')[:16]}",
             f"  intake    {t['intake']['outcome']} ({t['intake']['reason'] or '-'})",
             "  context   " + (", ".join(f"{f['name']} from {f['source']}"
                                         for f in t["context_fields"]) or "-")]
    for d in t["drafts"]:
        flags = ", ".join(str(f) for f in d["findings"]) or "no flags"
        lines.append(f"  draft v{d['version']}  {d['status']} · {d['provider']}/{d['model']}"
                     f" · prompt {d['prompt_version']} · {flags}")
    lines.append(f"  policy    {t['policy_version'] or '-'}")
    for g in t["gate"]:
        lines.append(f"  gate      {g['from_state']} -> {g['to_state']} ({g['reason']})")
    for r in t["decisions"]:
        verdict = "accepted" if r["accepted"] else f"refused: {r['refusal_code']}"
        lines.append(f"  review    {_at(r['at'])} {r['decision']} by {r['reviewer']}"
                     f" ({r['role']}) on v{r['draft_version']}: {verdict}")
    for r in t["receipts"]:
        lines.append(f"  receipt   {r['adapter']}/{r['action']} key {r['action_key'][:16]}…"
                     f" {r['status']} external {r['external_id'] or '-'} · attempts"
                     f" {r['attempts']} · {_at(r['updated_at'])}")
    for d in t["dead_letters"]:
        lines.append(f"  dead      #{d['id']} {d['error_class']}/{d['error_code']} in"
                     f" {d['state']} · {d['status']} · replays {d['replays']}")
    if t.get("hold"):
        h = t["hold"]
        looked = f", last looked {_at(h['checked_at'])}" if h["checked_at"] else ""
        lines.append(f"  held      by {h['held_by']} since {_at(h['since'])}{looked}"
                     f" · wakes on {h['wakes']}")
    for f in t.get("failing_steps", []):
        lines.append(f"  failing   {f['step']}: {f['attempts']} tries since"
                     f" {_at(f['first_seen_at'])}, last {_at(f['last_seen_at'])}"
                     f" · {f['error_class']}/{f['error_code']}")
    for run in t["runs"]:
        waits = run.get("waits_for")
        lines.append(f"  run       {run['workflow_id']} {run['status']}"
                     + (f" · {said(waits)}" if waits else "")
                     + (f"  {run['ui']}" if run.get("ui") else ""))
    if "audit" in t:
        problems = t["audit"]["problems"]
        lines.append("  audit     " + ("chain intact" if not problems
                                       else f"{len(problems)} problem(s)"))
        lines += [f"    ! {p}" for p in problems]
    return lines
