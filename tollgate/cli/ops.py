"""`tollgate ops`: what an operator does. Kill switches and dead letters need only PostgreSQL,
so they work while the Temporal server is down; state, replay and sweep need Temporal too.

A lazy group, as the root is (tollgate/cli/lazy.py): `tollgate ops state` imports the state
command's module, not the dead letters', the incident drafter's or the status report's, and
`tollgate ops --help` imports none of them (docs/performance.md, "CLI start-up").
"""

from __future__ import annotations

import click

from tollgate.cli.lazy import LazyGroup

#: Every `ops` command: where it is, and its help up to the end of the first sentence, which is
#: what `tollgate ops --help` shows of it; tests/cli/test_cli_startup.py holds this table to the
#: commands' own help.
OPS_COMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("tollgate.cli.trace:audit",
              "Check the tamper-evident audit: exit 1 naming each row edited, deleted or "
              "written around the chain (docs/runbook.md says what to do)."),
    "backup": ("tollgate.cli.ops_backup:backup_cmd",
               "Write PostgreSQL's state, receipts, decisions and dead letters to FILE (one "
               "dump, so they come back from the same instant)."),
    "close": ("tollgate.cli.ops_close:close",
              "Record the end of WORKFLOW_ID (event/TENANT/KEY) whose run was terminated, "
              "failed, timed out or canceled: STOPPED, reason run_terminated (run_failed, "
              "run_timed_out, run_canceled), audited; one Temporal no longer knows, "
              "run_not_found, once its record has not changed for the namespace's retention."),
    "contacts": ("tollgate.cli.ops_contacts:contacts",
                 "A tenant's own contact points: never flagged as foreign in its drafts."),
    "dlq": ("tollgate.cli.ops_dlq:dlq",
            "Dead letters: what failed for good, with its owner and replay plan."),
    "incident": ("tollgate.cli.ops_incident:incident",
                 "Draft a postmortem from the window's redacted evidence (dead letters, unknown "
                 "writes, circuit closures, kill switches, quarantines, refused drafts, "
                 "replays); keep it when every sentence rests on the packet (exit 1 otherwise, "
                 "nothing kept)."),
    "kill": ("tollgate.cli.ops_switch:kill",
             "Close a kill switch: no action of that adapter/tenant is sent."),
    "migrate": ("tollgate.cli.ops_backup:migrate",
                "Apply the database migrations not applied yet, then stop (a deployment's "
                "one-off job; every pool also applies them when it opens)."),
    "modes": ("tollgate.cli.ops_rollout:modes", "List the rollout mode rows (no row: assisted)."),
    "outbox": ("tollgate.cli.ops_outbox:outbox",
               "Outbox rows moved aside after their bounded tries, or still waiting for the "
               "relay."),
    "reopen": ("tollgate.cli.ops_switch:reopen",
               "Reopen a kill switch by the runbook: --root-cause, --fixture, and --canary N (or "
               "a canary that passed since)."),
    "restore": ("tollgate.cli.ops_backup:restore_cmd",
                "Replace the database with the backup in FILE, then let the reconciler and the "
                "sweep settle what happened since (docs/runbook.md)."),
    "rollout": ("tollgate.cli.ops_rollout:rollout",
                "Put TENANT/ADAPTER in a rollout mode (fixture, shadow, canary, assisted)."),
    "state": ("tollgate.cli.ops_state:state",
              "Current state of WORKFLOW_ID (event/TENANT/KEY), as the Web UI filters on it."),
    "status": ("tollgate.cli.ops_status:status",
               "Records per state and the oldest in each open one, reviews waiting and past SLA "
               "per tenant, open unknown writes (one moved aside to a dead letter awaiting a "
               "person is counted there, one whose dead letter was closed by hand apart), dead "
               "letters by reason, closed switches, the last sweep, the outbox (rows waiting, "
               "the oldest's age, rows moved aside), held runs by what holds them, steps "
               "failing try after try, reviewer notices not delivered, whether a worker polls "
               "the task queue and each target's, and whether the codec server answers."),
    "sweep": ("tollgate.cli.ops_sweep:sweep",
              "Compare the receipts with the targets now (exit 1 when a target misses a "
              "write)."),
    "switches": ("tollgate.cli.ops_switch:switches",
                 "List the kill switches (no row: everything open)."),
}


@click.group(cls=LazyGroup, lazy=OPS_COMMANDS)
def ops() -> None:
    """Operator: state, kill switches, dead letters, receipt sweep, rollout modes."""
