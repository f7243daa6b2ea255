"""`tollgate review`: list, show and decide (the decisions: tollgate/cli/review_decide.py).

A lazy group, as the root is (tollgate/cli/lazy.py): `tollgate review list` imports the queue's
module, not the record's or the decisions', and `tollgate review --help` imports none of them
(docs/performance.md, "CLI start-up").
"""

from __future__ import annotations

import click

from tollgate.cli.lazy import LazyGroup

#: Every `review` command: where it is, and its help up to the end of the first sentence, which
#: is what `tollgate review --help` shows of it; tests/cli/test_cli_startup.py holds this table
#: to the commands' own help.
REVIEW_COMMANDS: dict[str, tuple[str, str]] = {
    "approve": ("tollgate.cli.review_decide:approve",
                "Approve the draft of WORKFLOW_ID you were shown; it is sent once approved."),
    "list": ("tollgate.cli.review_list:list_cmd",
             "Records waiting for review, the nearest SLA first, with age, flags and SLA left."),
    "reject": ("tollgate.cli.review_decide:reject",
               "Reject the draft of WORKFLOW_ID you were shown; nothing is sent."),
    "request-info": ("tollgate.cli.review_decide:request_info",
                     "Ask a question about the draft of WORKFLOW_ID you were shown; a new draft "
                     "version answers it and the review starts again."),
    "show": ("tollgate.cli.review_show:show_cmd",
             "Draft, sources, unknowns, risk, policy and every decision of WORKFLOW_ID "
             "(event/TENANT/KEY), and the --seen token a decision on it must carry."),
}


@click.group(cls=LazyGroup, lazy=REVIEW_COMMANDS)
def review() -> None:
    """Reviewer: list the queue, show a record, decide."""
