"""The demo's scenes for the other two seeds (docs/tagging.md, docs/fan-out.md), run beside the
care reminder on the same stack and worker.

Tagging: a user with the tags "UI design" and "design systems" saves a page about a design
system in Figma. The offline tagger reads the page and proposes its keywords "design system",
"Figma", "UI design" and "dashboards": "UI design" is an exact merge, "design system" a trigram
merge into "design systems" (pg_trgm similarity 0.81, over the 0.75 rule), "Figma" and
"dashboards" new tags. The user removes Figma; the same tag
write arriving again (as after a worker crash) does not bring it back. Saving the URL again
returns the item.

Fan-out (``demo_fanout``): one ORDER_PLACED to inventory, notify and analytics with analytics
down: inventory delivered, analytics in its own dead letter, notify's order confirmation sent
once after the order desk approves it; publishing it again is a duplicate.
"""

from __future__ import annotations

import asyncio
import logging

import asyncpg
from temporalio.client import Client

from adapters.postgres.tagging import TaggingStore
from contracts.tagging import ApplyTagsRequest, ItemCapture, NormalisedTag, TagItemResult
from policies.keys import tag_workflow_id
from policies.tagging import TRIGRAM_MERGE, tag_key
from tollgate.dev.demo_fanout import OrderDesk, fan_out_scene
from tollgate.intake.items import save_item, temporal_starter
from tollgate.runtime.run_end import run_result

__all__ = ["domain_scenes"]


#: The demo reader's tags before the save, and the page they save (its text is what the offline
#: tagger reads; tests/adapters/test_offline_tags.py checks the merges on PostgreSQL).
DEMO_USER_TAGS = ("UI design", "design systems")
DEMO_PAGE = ItemCapture(
    user_id="demo-reader", url="https://example.com/design-system-in-figma",
    title="A design system in Figma",
    description="UI design notes: how a design system keeps dashboards consistent.",
    text="A design system is a shared library of components. In Figma, the design system holds "
         "the UI design tokens, so every dashboard uses the same colours and components.")
DEMO_MERGES = [("exact", "UI design"), ("new", "Figma"), ("new", "dashboards"),
               ("similar", "design systems")]


async def tagging_scene(client: Client, pool: asyncpg.Pool, task_queue: str) -> list[str]:
    store, capture = TaggingStore(pool), DEMO_PAGE
    user = capture.user_id
    for name in DEMO_USER_TAGS:
        await store.add_user_tag("acme", user, tag_key(name), name)
    saved = await save_item(store, temporal_starter(client, task_queue), capture,
                            tenant="acme")
    result: TagItemResult = (await run_result(client.get_workflow_handle(
        tag_workflow_id(saved.item_id, 1), result_type=TagItemResult))).value
    print(f"\n  tagging: item {saved.item_id} saved ({saved.job_state.value} at once), job "
          f"{result.state.value}")
    for t in result.tags:
        sim = f" (similarity {t.similarity:.2f})" if t.similarity is not None else ""
        print(f"    {t.how:8} {t.name}{sim}")
    await store.remove_tag("acme", user, saved.item_id, "Figma")
    again = ApplyTagsRequest(item_id=saved.item_id, attempt=1, tags=[
        NormalisedTag(key=t.key, name=t.name, confidence=0.8) for t in result.tags])
    await store.apply_tags(again, TRIGRAM_MERGE)
    final = await store.item_tags(saved.item_id)
    resaved = await save_item(store, temporal_starter(client, task_queue), capture,
                              tenant="acme")
    print(f"    after removing Figma and a repeated write: {', '.join(sorted(final))}")
    problems = []
    if sorted((t.how, t.name) for t in result.tags) != DEMO_MERGES:
        problems.append(f"tagging: {[(t.how, t.name) for t in result.tags]}")
    if sorted(final) != ["UI design", "dashboards", "design systems"]:
        problems.append(f"tagging: tags after removal {final}")
    if resaved.created or resaved.item_id != saved.item_id:
        problems.append("tagging: saving the same URL again made a new item")
    return problems


async def domain_scenes(client: Client, database_url: str, task_queue: str,
                        desk: OrderDesk) -> list[str]:
    """Both scenes side by side (the fan-out waits on the down consumer's retries and on the
    order desk's approval of the confirmation, which ``desk`` gives)."""
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=4)
    # The down consumer's failed attempts and its dead letter are the point of the scene, and the
    # scene prints them as outcomes; the SDK's traceback per attempt and the dead letter's
    # warning line would bury them.
    quiet = [logging.getLogger(name) for name in ("temporalio.activity", "tollgate.fanout")]
    levels = [q.level for q in quiet]
    for q in quiet:
        q.setLevel(logging.ERROR)
    try:
        tagging, fan_out = await asyncio.gather(
            tagging_scene(client, pool, task_queue), fan_out_scene(client, pool, task_queue, desk))
    finally:
        for q, level in zip(quiet, levels, strict=True):
            q.setLevel(level)
        await pool.close()
    return tagging + fan_out
