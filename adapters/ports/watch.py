"""The step watch port: what the activity interceptor tells PostgreSQL about a step that an
operator must see without Temporal (``tollgate ops status``, ``tollgate trace``).

Best effort by design: the interceptor bounds each call and carries on when it fails, so a
watch that cannot write never changes a step's outcome.
"""

from __future__ import annotations

from typing import Protocol


class StepWatch(Protocol):
    async def failing(self, *, workflow_id: str, step: str, tenant_id: str | None,
                      attempt: int, error_class: str, error_code: str) -> None:
        """A try of ``step`` past the threshold failed and the step will be tried again."""

    async def recovered(self, *, workflow_id: str, step: str) -> None:
        """``step`` succeeded, or failed for good (its run goes on and shows it)."""

    async def held(self, *, workflow_id: str, tenant_id: str, adapter: str) -> None:
        """The send found a kill switch closed over ``adapter``/``tenant_id``: the run waits."""
