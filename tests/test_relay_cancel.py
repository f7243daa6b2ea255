"""The tagging relay ends when cancelled, even when the start it was waiting on reported the
cancel as an error of its own (the Temporal SDK does for a cancelled call): taken for a
deferred start, the cancel was spent and the loop slept and went on for ever. It and the
identity provider's key refresh also end on a cancel a library swallowed with no error at all
(tests/swallowed_cancel.py)."""

from __future__ import annotations

from tests.swallowed_cancel import (
    answered_as_cancelled,
    cancelled_in_disguise,
    ends_cancelled,
)
from tollgate.intake.items import relay_loop
from tollgate.runtime.jwks import KeySet


class _Store:
    def __init__(self) -> None:
        self.passes = 0

    async def unstarted(self, limit: int) -> list[tuple[int, int]]:
        self.passes += 1
        return [(1, 1)]

    async def mark_started(self, item_id: int, run: int) -> None:
        return None


async def test_a_cancel_the_start_reported_as_its_own_error_ends_the_relay() -> None:
    calls = 0

    async def start(item_id: int, run: int) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            await cancelled_in_disguise(RuntimeError("the start call was cancelled"))
        raise RuntimeError("Temporal unreachable")

    store = _Store()
    relay = relay_loop(store, start, every_s=0.01)  # type: ignore[arg-type]
    await ends_cancelled(relay, "the relay", lambda: f"{store.passes} passes")


async def test_a_cancel_a_library_swallowed_in_the_pass_still_ends_the_relay() -> None:
    class SwallowingStore(_Store):
        async def unstarted(self, limit: int) -> list[tuple[int, int]]:
            self.passes += 1

            async def nothing_due() -> list[tuple[int, int]]:
                return []

            return await answered_as_cancelled(nothing_due) if self.passes == 1 else []

    store = SwallowingStore()

    async def start(item_id: int, run: int) -> None:
        raise AssertionError("nothing is due")

    relay = relay_loop(store, start, every_s=0.01)  # type: ignore[arg-type]
    await ends_cancelled(relay, "the relay", lambda: f"{store.passes} passes")


async def test_a_cancel_a_key_fetch_swallowed_still_ends_the_key_refresh() -> None:
    keys = KeySet("https://issuer.invalid")
    fetches = 0

    async def refresh(*, force: bool = True) -> None:
        nonlocal fetches
        fetches += 1

        async def fetched() -> None:
            return None

        if fetches == 1:
            await answered_as_cancelled(fetched)

    keys.refresh = refresh  # type: ignore[method-assign]
    await ends_cancelled(keys.keep_fresh(0.01), "the key refresh",
                         lambda: f"{fetches} fetches")
