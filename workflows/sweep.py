"""ReceiptSweepWorkflow: run by a Temporal Schedule, it settles receipts stuck PENDING/UNKNOWN
that the target does hold, and reports drift both ways (receipt open but target has it;
receipt SUCCEEDED but the target does not). It never sends anything."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.sweep import SweepActivities
    from contracts.sweep import SweepReport, SweepRequest
    from workflows import timeouts as t

@workflow.defn(name="ReceiptSweep")
class ReceiptSweepWorkflow:
    @workflow.run
    async def run(self, request: SweepRequest) -> SweepReport:
        report: SweepReport = await workflow.execute_activity_method(
            SweepActivities.sweep_receipts, request,
            start_to_close_timeout=t.SWEEP_TIMEOUT, retry_policy=t.READ_RETRY,
        )
        if report.drift_missing_at_target or report.still_open:
            workflow.logger.warning(
                "receipt sweep: %d still open, %d marked sent but missing at the target",
                len(report.still_open), len(report.drift_missing_at_target))
        return report
