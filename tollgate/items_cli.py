"""`tollgate items`: save an item (tagging starts after the commit), see tagging jobs by state,
retry a FAILED job, take a tag off an item. Bad input is one line on stderr, exit code 2."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from pydantic import ValidationError

from contracts.errors import TollgateError
from contracts.tagging import ItemCapture
from tollgate.config import Settings


def add_items_parser(sub: Any) -> None:
    items = sub.add_parser("items", help="content library: save, jobs, retry, untag")
    isub = items.add_subparsers(dest="items_cmd", required=True)
    save = isub.add_parser("save", help="save a page; tagging runs later, never in the way")
    save.add_argument("--user", required=True)
    save.add_argument("--url", required=True)
    save.add_argument("--title", required=True)
    save.add_argument("--description", default="")
    isub.add_parser("jobs", help="tagging jobs per state (PENDING growing: no consumer)")
    retry = isub.add_parser("retry", help="retry a FAILED tagging job (owner only)")
    retry.add_argument("item_id", type=int)
    retry.add_argument("--user", required=True)
    untag = isub.add_parser("untag", help="take a tag off an item; no retry brings it back")
    untag.add_argument("item_id", type=int)
    untag.add_argument("tag")
    untag.add_argument("--user", required=True)
    bench = isub.add_parser("bench", help="time saves while the model takes --model-delay s")
    bench.add_argument("--items", type=int, default=50)
    bench.add_argument("--model-delay", type=float, default=5.0)
    items.set_defaults(func=run_items)


def run_items(args: argparse.Namespace) -> int:
    if args.items_cmd == "bench":
        import logging

        from tollgate.bench_save import run_bench_save
        from tollgate.logging import configure_logging

        configure_logging(logging.WARNING)
        return run_bench_save(args.items, args.model_delay)
    capture: ItemCapture | None = None
    if args.items_cmd == "save":
        try:
            capture = ItemCapture(user_id=args.user, url=args.url, title=args.title,
                                  description=args.description)
        except ValidationError as exc:
            first = exc.errors()[0]
            print(f"invalid item: {'.'.join(map(str, first['loc']))}: {first['msg']}",
                  file=sys.stderr)
            return 2
    try:
        return asyncio.run(_main(args, Settings.from_env(), capture))
    except TollgateError as exc:
        print(f"{exc.error_class.value}: {exc.message}", file=sys.stderr)
        return 2 if exc.error_class.value == "invalid" else 1


async def _main(args: argparse.Namespace, settings: Settings, capture: ItemCapture | None) -> int:
    if not settings.database_url:
        print("DATABASE_URL is not set and no `tollgate dev` is running", file=sys.stderr)
        return 2
    from adapters.postgres_store import create_pool
    from adapters.postgres_tagging import TaggingStore
    from tollgate.client import build_client
    from tollgate.items import relay_unstarted, save_item, temporal_starter

    pool = await create_pool(settings.database_url, max_size=2)
    store = TaggingStore(pool)
    try:
        if args.items_cmd == "jobs":
            for state, n in (await store.jobs_by_state()).items():
                print(f"{state.value:<11} {n}")
            return 0
        if args.items_cmd == "untag":
            removed = await store.remove_tag(args.user, args.item_id, args.tag)
            print("removed" if removed else "no such tag on that item")
            return 0 if removed else 1
        try:
            client = await build_client(settings.temporal_address, settings.namespace)
            start = temporal_starter(client, settings.task_queue)
        except Exception:  # Temporal down: the save and the retry still count; the relay starts
            start = _unreachable
        if args.items_cmd == "retry":
            job = await store.retry_job(args.user, args.item_id)
            await relay_unstarted(store, start)
            print(f"item {job.item_id}: {job.state.value} (run {job.runs})")
            return 0
        assert capture is not None
        saved = await save_item(store, start, capture)
        note = "tagging started" if saved.started else (
            "already saved" if not saved.created else "tagging queued (relay will start it)")
        print(f"item {saved.item_id}: {saved.job_state.value}, {note}")
        return 0
    finally:
        await pool.close()


async def _unreachable(item_id: int, run: int) -> None:
    raise ConnectionError("temporal unreachable")
