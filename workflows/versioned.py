"""Each workflow type's worker-versioning behaviour (docs/deploy.md, rolling out).

The server refuses a declared behaviour from a worker that is not versioned ("versioning
behavior cannot be specified without deployment options being set with versioned mode"), so
the types in ``workflows/`` declare none, and unversioned workers run them as before. A worker
polling as a deployment version (``TOLLGATE_DEPLOYMENT_NAME``/``TOLLGATE_BUILD_ID``) runs these
instead: the same type names and code, each with its behaviour and the reason for it. The SDK
wants ``@workflow.run`` on the declaring class itself, hence the one-line overrides.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import VersioningBehavior

with workflow.unsafe.imports_passed_through():
    from contracts import FinalOutcome, IntakeRequest, ReconcileRequest, ReconcileResult
    from contracts.fanout import ConsumeRequest, ConsumeResult, FanOutRequest, FanOutResult
    from contracts.sweep import SweepReport, SweepRequest
    from contracts.tagging import TagItemRequest, TagItemResult
    from workflows.fan_out import ConsumeEventWorkflow, FanOutWorkflow
    from workflows.process_event import ProcessEventWorkflow
    from workflows.reconcile_write import ReconcileWriteWorkflow
    from workflows.sweep import ReceiptSweepWorkflow
    from workflows.tag_item import TagItemWorkflow

PINNED, AUTO_UPGRADE = VersioningBehavior.PINNED, VersioningBehavior.AUTO_UPGRADE


# A review waits up to a day (longer when held at the gate): the run must finish on the code
# that started it. patched() still guards the changes an unversioned fleet needs.
@workflow.defn(name="ProcessEvent", versioning_behavior=PINNED)
class PinnedProcessEvent(ProcessEventWorkflow):
    @workflow.run
    async def run(self, request: IntakeRequest) -> FinalOutcome:
        return await super().run(request)


# A fix to settling an unknown write should reach the runs inside their 10-minute window; its
# changes go behind patched() with replay histories, as reconcile_write.py's do.
@workflow.defn(name="ReconcileWrite", versioning_behavior=AUTO_UPGRADE)
class UpgradingReconcileWrite(ReconcileWriteWorkflow):
    @workflow.run
    async def run(self, request: ReconcileRequest) -> ReconcileResult:
        return await super().run(request)


# One activity per run, started by a schedule: no old code worth keeping alive.
@workflow.defn(name="ReceiptSweep", versioning_behavior=AUTO_UPGRADE)
class UpgradingReceiptSweep(ReceiptSweepWorkflow):
    @workflow.run
    async def run(self, request: SweepRequest) -> SweepReport:
        return await super().run(request)


# Tagging and fan-out run for seconds to minutes: they finish on their own code, no patch needed.
@workflow.defn(name="TagItemWorkflow", versioning_behavior=PINNED)
class PinnedTagItem(TagItemWorkflow):
    @workflow.run
    async def run(self, request: TagItemRequest) -> TagItemResult:
        return await super().run(request)


@workflow.defn(name="FanOutWorkflow", versioning_behavior=PINNED)
class PinnedFanOut(FanOutWorkflow):
    @workflow.run
    async def run(self, request: FanOutRequest) -> FanOutResult:
        return await super().run(request)


@workflow.defn(name="ConsumeEventWorkflow", versioning_behavior=PINNED)
class PinnedConsumeEvent(ConsumeEventWorkflow):
    @workflow.run
    async def run(self, request: ConsumeRequest) -> ConsumeResult:
        return await super().run(request)


#: What a versioned main worker registers, in place of the unversioned types.
VERSIONED_WORKFLOWS: tuple[type, ...] = (PinnedProcessEvent, UpgradingReconcileWrite,
                                         UpgradingReceiptSweep, PinnedTagItem, PinnedFanOut,
                                         PinnedConsumeEvent)
