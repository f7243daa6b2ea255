"""``within``, the bound our code puts on a call instead of ``asyncio.wait_for`` (ADR 0064).

On 3.11 ``wait_for`` gave back a call's answer when the caller was cancelled as it came, and the
cancel was gone: a loop went on for ever. ``within`` keeps that cancel, and otherwise answers as
``wait_for`` did: the deadline is a ``TimeoutError`` (or the call's own error when the call
reports its cancel as one, as the Temporal SDK's update does), and a cancel from outside is a
cancel even when the call reported it as an error of its own."""

from __future__ import annotations

import asyncio

import pytest

from adapters.broker.cancel import cancelling, within
from tests.swallowed_cancel import cancel_as_answered, ends_cancelled


class DisguisedCancel(Exception):
    """What the SDK raises for a cancelled call instead of ``CancelledError``."""


async def reports_its_cancel_as_its_own_error() -> None:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        raise DisguisedCancel("the call was cancelled") from None


async def test_a_cancel_that_lands_as_the_call_answers_ends_the_loop() -> None:
    rounds = 0

    async def poll_until_cancelled() -> None:
        nonlocal rounds
        caller = asyncio.current_task()
        assert caller is not None
        while True:
            rounds += 1
            answer = cancel_as_answered(caller, None) if rounds == 1 else asyncio.sleep(0)
            await within(answer, 10)
            await asyncio.sleep(0.01)

    await ends_cancelled(poll_until_cancelled(), "the loop", lambda: f"{rounds} rounds")
    assert rounds == 1


async def test_a_cancel_the_call_reports_as_its_own_error_is_still_a_cancel() -> None:
    # wait_for raised the cancel itself; a caller that retries on any Exception (the chaos
    # submit, the bench's result wait) must not take it for the call's failure and go on.
    tries = 0

    async def retry_until_cancelled() -> None:
        nonlocal tries
        while True:
            tries += 1
            # Only the first try disguises its cancel, so the test's second cancel ends it.
            call = reports_its_cancel_as_its_own_error() if tries == 1 else asyncio.sleep(3600)
            try:
                await within(call, 10)
            except Exception:
                await asyncio.sleep(0.01)

    task = asyncio.create_task(retry_until_cancelled())
    await asyncio.sleep(0.05)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=3)
    if not done:
        task.cancel()
        await asyncio.wait({task}, timeout=3)
    assert tries == 1, f"the retries went on after the cancel ({tries} tries)"
    assert done and task.cancelled()


async def test_the_deadline_is_a_timeout_error_and_leaves_no_cancel_behind() -> None:
    with pytest.raises(TimeoutError):
        await within(asyncio.Event().wait(), 0.01)
    assert not cancelling()
    await asyncio.sleep(0)  # and none is raised later


async def test_the_deadline_the_call_reports_as_its_own_error_is_that_error() -> None:
    # As wait_for answered: tollgate/ops/review_ticket.py maps the SDK's error to "not taken".
    with pytest.raises(DisguisedCancel):
        await within(reports_its_cancel_as_its_own_error(), 0.01)
    assert not cancelling()


async def test_an_answer_in_time_is_the_answer() -> None:
    async def answer() -> str:
        await asyncio.sleep(0)
        return "answer"

    assert await within(answer(), 10) == "answer"


async def test_a_task_group_that_failed_in_the_call_is_no_cancel_of_the_caller() -> None:
    # 3.11's TaskGroup cancels its task when a child fails after the body ended, and never takes
    # that back: run in the caller's task, the call would leave a count that reads as a cancel
    # (the chaos run's restart failure came back as a CancelledError).
    async def fails() -> None:
        await asyncio.sleep(0.01)
        raise RuntimeError("a server did not come back")

    async def grouped() -> None:
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(fails())
        except ExceptionGroup as failed:
            raise failed.exceptions[0] from None

    with pytest.raises(RuntimeError, match="did not come back"):
        await within(grouped(), 10)
    assert not cancelling()
