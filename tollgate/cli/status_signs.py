"""The lines of ``tollgate ops status`` for runs that wait without a word (ADR 0038): held runs
by what holds them, steps that keep failing, reviewer notices not delivered, whether a worker
polls the task queue and each target's, the codec server.
``tollgate/cli/ops_status.py`` prints them and adds their reasons to "needs a human"."""

from __future__ import annotations

from typing import Any

#: ``tollgate.ops.worker_probe``'s failed states -> the "needs a human" line (its detail is
#: ``where``: the server, and the status it answered).
PROBE_FAILED = {
    "unreachable": "{where} unreachable: open events do not move (start it, or set "
                   "TEMPORAL_ADDRESS)",
    "refused": "{where}: refused, open events may not move (check the credentials, "
               "TEMPORAL_API_KEY or the TLS client certificate, and their rights on the "
               "namespace)",
    "no namespace": "{where}: open events do not move there (set TEMPORAL_NAMESPACE to the "
                    "workers' namespace)",
    "failing": "{where}: open events may not move (the server's log says why)",
}


def age(seconds: float) -> str:
    minutes = int(seconds // 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m"


def lines(snap: dict[str, Any]) -> list[str]:
    # What wakes a hold is the workflow's own timer figures, in workflows.budget: it imports the
    # Temporal SDK, which `ops --help` and a status with PostgreSQL down need not pay for.
    from tollgate.ops.holds import wakes

    out = []
    holds = snap["holds"]
    if not holds:
        out.append("held runs: none")
    for h in holds:
        wake = wakes(h["held_by"], released=h["released"])
        out.append(f"held by {h['held_by']}: {h['runs']} run(s), oldest "
                   f"{age(h['oldest_age_s'])} · wakes on {wake}")
    failing = snap["failing_steps"]
    if failing["oldest"] is None:
        out.append("failing steps: none")
    else:
        o = failing["oldest"]
        steps = ", ".join(f"{step} {n}" for step, n in sorted(failing["by_step"].items()))
        out.append(f"failing steps: {failing['count']} ({steps}); oldest {o['step']} of "
                   f"{o['workflow_id']} failing for {age(o['age_s'])}, {o['attempts']} tries, "
                   f"{o['error_class']}/{o['error_code']}")
    n = snap["notices"]
    out.append(f"reviewer notices not delivered: {n['given_up']} given up, {n['unknown']} "
               f"unknown, {n['retrying']} being retried")
    workers = snap.get("workers") or {"state": "not probed", "task_queue": "-", "detail": None}
    out.append(f"workers: {workers['state']} (task queue {workers['task_queue']})"
               + (f" · {workers['detail']}" if workers["detail"] else ""))
    if targets := snap.get("targets"):
        out.append("targets: " + ", ".join(
            f"{t['target']} {t['state']}" + (f" ({t['waiting']} waiting on task queue "
                                             f"{t['task_queue']}, oldest "
                                             f"{age(t['oldest_age_s'] or 0)})"
                                             if t["state"] == "no worker" else "")
            for t in targets))
    codec = snap["codec"]
    out.append(f"codec: {codec['state']}" + (f" ({codec['url']})" if codec["url"] else "")
               + (f" · {codec['detail']}" if codec["detail"] else ""))
    return out


def reasons(snap: dict[str, Any], *, max_failing_steps: int) -> list[str]:
    """The "needs a human" reasons of these lines."""
    why = []
    silent = sum(h["silent"] for h in snap["holds"])
    if silent:
        # Here, not at the top: the adapter module imports asyncpg, which `ops status --help`
        # has no use for (docs/performance.md, "CLI start-up").
        from adapters.postgres.run_signs import HOLD_SILENT_AFTER

        why.append(f"{silent} held run(s) have not looked again for over "
                   f"{age(HOLD_SILENT_AFTER.total_seconds())}: is their worker running? "
                   "(tollgate trace EVENT shows when each last looked)")
    failing = snap["failing_steps"]
    if failing["count"] > max_failing_steps:
        o = failing["oldest"]
        why.append(f"{failing['count']} step(s) failing again and again (limit "
                   f"{max_failing_steps}); oldest {o['step']} of {o['workflow_id']}")
    n = snap["notices"]
    if n["given_up"] or n["unknown"]:
        why.append(f"{n['given_up'] + n['unknown']} reviewer notice(s) not delivered")
    workers = snap.get("workers") or {"state": "not probed"}
    if workers["state"] == "no worker" and open_work(snap):
        why.append(f"no worker polls task queue {workers['task_queue']}: open events do not "
                   "move (start one: python -m worker)")
    elif workers["state"] in PROBE_FAILED and open_work(snap):
        # Runs stop moving with Temporal away as with no worker, and PostgreSQL alone still
        # shows them where they stopped, as if all were well. A refusal or a namespace the
        # server lacks pages too (the pipeline cannot be seen to move), with its own fix.
        where = workers["detail"] or "Temporal"
        why.append(PROBE_FAILED[workers["state"]].format(where=where))
    for t in snap.get("targets") or []:
        if t["state"] == "no worker":
            # Not a fault of the send: it waits, with no timeout, for a worker with the URL.
            why.append(f"no worker polls target {t['target']}'s task queue {t['task_queue']}: "
                       f"{t['waiting']} send(s) or lookup(s) wait there, nothing sent (set "
                       f"{t['variable']} on a worker, or close the {t['target']} switch first)")
    codec = snap.get("codec") or {"state": "not probed"}
    if codec["state"] not in ("ok", "not configured", "not probed"):
        why.append(f"codec server {codec['state']}: the Web UI cannot show payloads")
    return why


def open_work(snap: dict[str, Any]) -> bool:
    """Whether anything waits for a worker: a record in a state it leaves, or an outbox row."""
    from contracts import TERMINAL_STATES

    return (any(r["state"] not in TERMINAL_STATES and r["count"] for r in snap["states"])
            or bool((snap.get("outbox") or {}).get("depth")))
