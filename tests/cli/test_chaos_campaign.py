"""`tollgate chaos --seeds`: many seeds, one summary that names every failing seed and every
seed the budget left out. The runs themselves are `tests/e2e/test_chaos.py`'s; here a seed's
run is replaced by its report so the campaign's own bookkeeping can be checked quickly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapters.broker.cancel import within
from tests.eventually import eventually
from tollgate.chaos import campaign as module
from tollgate.chaos.campaign import campaign, parse_seeds


def test_seed_lists_and_ranges() -> None:
    assert parse_seeds("1-4") == [1, 2, 3, 4]
    assert parse_seeds("3,7, 11") == [3, 7, 11]
    assert parse_seeds("1-3,2,9") == [1, 2, 3, 9]
    for bad in ("x", "5-2", "1-", "-3", ""):
        with pytest.raises(ValueError):
            parse_seeds(bad)


def report(seed: int, ok: bool) -> dict[str, Any]:
    return {"seed": seed, "events": 10, "workflows": 12, "seconds": 1.0, "worker_kills": 1,
            "server_restarts": ["postgres", "temporal"], "switches_reopened": 0,
            "target_faults": {"none": 8, "unavailable": 2}, "faults_not_fired": 0,
            "terminal_states": {"SUCCEEDED": 11, "STOPPED": 1},
            "invariants": {"at_most_one_message_per_action_key":
                           "held" if ok else ["k: 2 messages"], "no_event_lost": "held"},
            "ok": ok}


async def test_the_summary_adds_every_seed_up_and_names_the_failing_ones(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    async def fake_run(seed: int, events: int, folder: Path, **_: Any) -> dict[str, Any]:
        if seed == 4:
            raise OSError("port in use")
        return report(seed, ok=seed != 2)

    monkeypatch.setattr(module, "run_chaos", fake_run)
    lines: list[str] = []
    summary = await campaign([1, 2, 3, 4], 10, tmp_path, out=tmp_path / "out",
                             echo=lines.append)
    assert summary["seeds_run"] == 4 and summary["events"] == 30
    assert summary["workflows"] == 36 and summary["worker_kills"] == 3
    assert summary["terminal_states"] == {"SUCCEEDED": 33, "STOPPED": 3}
    assert summary["server_restarts"] == {"postgres": 3, "temporal": 3}
    assert summary["failed_seeds"] == {
        2: {"at_most_one_message_per_action_key": ["k: 2 messages"]},
        4: {"run": ["did not run: OSError: port in use"]}}
    assert summary["ok"] is False
    assert [line.split(":")[0] for line in lines] == ["seed 1", "seed 2", "seed 3", "seed 4"]
    assert json.loads((tmp_path / "out" / "seed-3.json").read_text())["ok"] is True


async def test_a_spent_budget_launches_no_new_seed_and_says_which_did_not_run(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ticks = iter(range(0, 1000, 10))  # each look at the clock is 10 s later

    async def fake_run(seed: int, events: int, folder: Path, **_: Any) -> dict[str, Any]:
        return report(seed, ok=True)

    monkeypatch.setattr(module, "run_chaos", fake_run)
    summary = await campaign([1, 2, 3, 4, 5], 10, tmp_path, budget_s=25, echo=lambda _: None,
                             clock=lambda: float(next(ticks)))
    # started at 0; seed 1 looks at 10 s, seed 2 at 20 s, seed 3 at 30 s: past the budget
    assert (summary["seeds_run"], summary["seeds_not_run"]) == (2, [3, 4, 5])
    assert summary["ok"] is True


async def test_a_server_that_does_not_come_back_ends_the_run_and_its_other_events(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The schedule restarts Temporal and it does not come back (StackError, a SystemExit that
    would stop the event loop from inside a task): the run ends with an ordinary error the
    campaign records as a failed seed, and the other events' tasks are cancelled rather than
    left retrying against a stack being torn down."""
    import asyncio

    from tollgate.chaos import driver
    from tollgate.chaos.schedule import make_plan
    from tollgate.config.settings import Settings
    from tollgate.dev.stack_config import StackError

    stopped: list[str] = []

    class Worker:
        async def stop(self) -> None:
            stopped.append("worker")

    async def start(*_: Any) -> Worker:
        return Worker()

    async def on_call(*_: Any) -> None:
        await asyncio.Event().wait()

    class Stack:
        def restart_temporal(self) -> None:
            raise StackError("Temporal dev server did not open its ports within 60 s")

    monkeypatch.setattr(driver.WorkerProcess, "start", start)
    monkeypatch.setattr(driver, "on_call", on_call)
    cancelled: list[int] = []

    class Run(driver.ChaosRun):
        async def one(self, e: Any, gate: asyncio.Semaphore) -> None:
            if e.index == 0:
                await asyncio.sleep(0.05)
                self.submitted = 1
                await self._maybe_restart()
                return
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append(e.index)
                raise

    plan = make_plan(3, 5, run_tag="x", restarts=0)
    plan.restarts.append((1, "temporal"))
    (tmp_path / "tenants.json").write_text('{"acme": "s"}')
    settings = Settings(state_dir=tmp_path)
    run = Run(plan, Stack(), None, settings)  # type: ignore[arg-type]
    with pytest.raises(driver.RestartFailed, match="temporal did not come back"):
        await within(run.run(), 10)
    assert sorted(cancelled) == [1, 2, 3, 4] and stopped == ["worker"]


async def test_the_operator_outlives_a_look_that_never_returns(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A look at the switches that hangs (a connection a restart left half-open) or fails in a
    way nobody foresaw is given up after its patience; the next look reopens the switch."""
    import asyncio

    from tollgate.chaos import oncall

    calls: list[str] = []

    class Pool:
        def terminate(self) -> None:
            calls.append("terminate")

    class Ops:
        def __init__(self, pool: Pool) -> None:
            pass

        async def switches(self) -> list[dict[str, Any]]:
            calls.append("look")
            if calls.count("look") == 1:
                await asyncio.Event().wait()  # never returns
            if calls.count("look") == 2:
                raise RuntimeError("not foreseen")
            return [{"adapter": "messaging", "tenant_id": "acme", "closed": True}]

        async def set_switch(self, **_: Any) -> None:
            calls.append("reopen")

    async def create_pool(*_: Any, **__: Any) -> Pool:
        return Pool()

    monkeypatch.setattr(oncall, "OpsStore", Ops)
    monkeypatch.setattr(oncall.asyncpg, "create_pool", create_pool)
    monkeypatch.setattr(oncall, "OPERATOR_EVERY_S", 0.01)
    monkeypatch.setattr(oncall, "OPERATOR_PATIENCE_S", 0.2)

    class Stack:
        database_url = "postgresql://unused"

    class Tally:
        reopened = 0

    tally = Tally()
    task = asyncio.create_task(oncall.on_call(Stack(), tally))
    try:
        await eventually(lambda: tally.reopened, "the operator reopening the switch", timeout=3,
                         interval=0.01)
    finally:
        task.cancel()
    assert tally.reopened >= 1
    assert calls[:5] == ["look", "terminate", "look", "terminate", "look"]


@pytest.mark.parametrize("argv", [["--seed", "3"], ["--seeds", "3"]])
def test_the_lookup_window_reaches_the_stand_ins_declaration_and_the_deadlines(
        argv: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--lookup-window`` is what the stand-in target declares to the run's worker (so how
    long a write that never landed keeps its event open) and what each event's deadline is
    counted from; without it, the 30 s as before. A run and a campaign alike."""
    from tollgate.chaos import run as run_module
    from tollgate.chaos.driver import ChaosRun
    from tollgate.chaos.schedule import make_plan
    from tollgate.chaos.stack import targets
    from tollgate.cli import main
    from tollgate.config.settings import Settings
    from tollgate.config.targets import parse_targets

    asked: list[int] = []

    async def fake_run(seed: int, events: int, folder: Path, **options: Any) -> dict[str, Any]:
        asked.append(options["lookup_window_s"])
        return report(seed, ok=True)

    monkeypatch.setattr(run_module, "run_chaos", fake_run)
    monkeypatch.setattr(module, "run_chaos", fake_run)
    for extra in (["--lookup-window", "8"], []):
        with pytest.raises(SystemExit) as ended:
            main(["chaos", *argv, "--events", "2", "--state-dir", str(tmp_path), *extra])
        assert ended.value.code == 0, capsys.readouterr().err
    assert asked == [8, 30]
    declared = parse_targets(targets(8))["messaging"]
    assert (declared.lookup_window_s, declared.dedupe) == (8, False)
    (tmp_path / "tenants.json").write_text('{"acme": "s"}')
    run = ChaosRun(make_plan(3, 2, run_tag="x"), None, None,  # type: ignore[arg-type]
                   Settings(state_dir=tmp_path), lookup_window_s=8)
    assert run.deadline_s == 8 + 120


def test_a_lookup_window_under_the_stand_ins_slowest_fault_is_refused(
        capsys: pytest.CaptureFixture[str]) -> None:
    from tollgate.cli import main

    with pytest.raises(SystemExit) as ended:
        main(["chaos", "--lookup-window", "2"])
    assert ended.value.code == 2
    assert "'--lookup-window': 2 is not in the range 3<=x<=86400" in capsys.readouterr().err
