"""Record the tagging and fan-out histories tests/replay replays:
`python -m tests.replay.record_domain_histories`.

Runs the demo's two domain scenes (tollgate.dev.demo_scenes) on a fresh embedded stack with the
analytics consumer down, and writes `tests/replay/histories/<name>.json` for the tagging run,
the fan-out parent and two of its children (one delivered, one dead-lettered). Keep old files
when re-recording: they are the runs already in flight.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from tollgate.config.settings import Settings
from tollgate.dev.demo_scenes import DOWN_CONSUMER, domain_scenes
from tollgate.dev.stack import DevStack, Ports, free_port
from tollgate.runtime.client import build_client
from worker import draft_worker, main_worker

OUT = Path(__file__).parent / "histories"
RUNS = {
    "tag_item_exact_similar_new": "tag-item/1/run-1",
    "fan_out_three_consumers": "fan-out/order-demo-1001",
    "consume_delivered": "consume/order-demo-1001/inventory",
    "consume_dead_lettered": f"consume/order-demo-1001/{DOWN_CONSUMER}",
}


async def record() -> None:
    stack = DevStack(state_dir=Path(tempfile.mkdtemp(prefix="tollgate-record-")),
                     ports=Ports(temporal=free_port(), ui=free_port(), crm=0, messaging=0))
    await asyncio.to_thread(stack.start)
    try:
        settings = Settings.from_env({**stack.env(), "TOLLGATE_CONSUMERS_DOWN": DOWN_CONSUMER})
        assert settings.database_url
        client = await build_client(settings.temporal_address, env=settings.env)
        async with main_worker(client, settings), draft_worker(client, settings):
            problems = await domain_scenes(client, settings.database_url, settings.task_queue)
            assert not problems, problems
            for name, workflow_id in RUNS.items():
                history = await client.get_workflow_handle(workflow_id).fetch_history()
                data = json.loads(history.to_json())
                (OUT / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")
    finally:
        await asyncio.to_thread(stack.stop)


if __name__ == "__main__":
    asyncio.run(record())
