"""The hang guard's dump names where a waiting task waits, down to the library frame, not only
the test's own outermost line (which said "in xreadgroup" for a hang inside redis-py)."""

from __future__ import annotations

import asyncio
import io

from tests.hang_guard import _dump_tasks


async def _inner(lock: asyncio.Lock) -> None:
    async with lock:
        return None


async def _outer(lock: asyncio.Lock) -> None:
    await _inner(lock)


async def test_the_dump_follows_a_task_down_to_the_lock_it_waits_on() -> None:
    lock = asyncio.Lock()
    await lock.acquire()
    task = asyncio.create_task(_outer(lock), name="waits-on-a-lock")
    await asyncio.sleep(0)
    out = io.StringIO()
    _dump_tasks(out)
    task.cancel()
    text = out.getvalue()
    ours = text[text.index("waits-on-a-lock"):]
    assert "in _outer" in ours and "in _inner" in ours
    assert "asyncio/locks.py" in ours and "in acquire" in ours
