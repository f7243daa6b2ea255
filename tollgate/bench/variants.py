"""The variants of the same-shape skeleton as workflows the bench runs beside it
(``--variant NAME``): each the skeleton with one of Tollgate's differences
(``tollgate.bench.variant``), under a workflow type and task queues of its own so the reviewer
lists it apart and its CPU is its own. Bench code: nothing in the product runs them."""

from __future__ import annotations

from temporalio import workflow

from tollgate.bench.baseline import BASELINES, Baseline, _Baseline
from tollgate.bench.variant import VARIANTS


async def _run(wf: _Baseline, name: str, raw: str) -> str:
    b = VARIANT_BASELINES[f"ss+{name}"]
    return await wf._steps(raw, draft_queue=b.draft_queue, naive=False, variant=b.variant,
                           send_queue=b.send_queue)


@workflow.defn(name="BenchVariantBytes")
class BytesVariant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "bytes", raw)


@workflow.defn(name="BenchVariantUpdate")
class UpdateVariant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "update", raw)


@workflow.defn(name="BenchVariantQueue")
class QueueVariant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "queue", raw)


@workflow.defn(name="BenchVariantUpsert")
class UpsertVariant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "upsert", raw)


@workflow.defn(name="BenchVariantTimers")
class TimersVariant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "timers", raw)


@workflow.defn(name="BenchVariantAttrs")
class AttrsVariant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "attrs", raw)


@workflow.defn(name="BenchVariantAll")
class AllVariant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "all", raw)


@workflow.defn(name="BenchVariantBytes4")
class Bytes4Variant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "bytes4", raw)


@workflow.defn(name="BenchVariantUpsert4")
class Upsert4Variant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "upsert4", raw)


@workflow.defn(name="BenchVariantTimers4")
class Timers4Variant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "timers4", raw)


@workflow.defn(name="BenchVariantQueue2")
class Queue2Variant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "queue2", raw)


@workflow.defn(name="BenchVariantSas")
class SasVariant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "sas", raw)


@workflow.defn(name="BenchVariantListing")
class ListingVariant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "listing", raw)


@workflow.defn(name="BenchVariantPollers")
class PollersVariant(_Baseline):
    @workflow.run
    async def run(self, raw: str) -> str:
        return await _run(self, "pollers", raw)


_CLASSES: dict[str, type[_Baseline]] = {
    "bytes": BytesVariant, "update": UpdateVariant, "queue": QueueVariant,
    "upsert": UpsertVariant, "timers": TimersVariant, "attrs": AttrsVariant, "all": AllVariant,
    "bytes4": Bytes4Variant, "upsert4": Upsert4Variant, "timers4": Timers4Variant,
    "queue2": Queue2Variant, "sas": SasVariant, "listing": ListingVariant,
    "pollers": PollersVariant}
VARIANT_BASELINES = {
    f"ss+{name}": Baseline(f"ss+{name}", f"BenchVariant{name.title()}",
                                   f"bench-{name}", f"bench-{name}-draft", cls, VARIANTS[name])
    for name, cls in _CLASSES.items()}
#: Every pipeline the bench can run beside Tollgate, by name.
PIPELINES: dict[str, Baseline] = {**BASELINES, **VARIANT_BASELINES}
