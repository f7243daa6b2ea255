"""The shell starts the fan-out, the tagging, the receipt sweep and a dead letter's replay by
the workflow's name, so that it need not import the workflow (and every activity, policy and
contract it uses) for a method reference: each name must be its workflow's own, and what the
shell sends and reads back must be the types the workflow's ``run`` takes and returns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, get_type_hints

import pytest
from temporalio import workflow

from contracts import ReconcileRequest, ReconcileResult
from contracts.fanout import FanOutRequest, FanOutResult
from contracts.sweep import SweepReport, SweepRequest
from contracts.tagging import TagItemRequest, TagItemResult
from tollgate.intake.items import TAG_ITEM_WORKFLOW
from tollgate.intake.publish import FAN_OUT_WORKFLOW
from tollgate.ops.actions import RECONCILE_WORKFLOW, SWEEP_WORKFLOW
from workflows.fan_out import FanOutWorkflow
from workflows.reconcile_write import ReconcileWriteWorkflow
from workflows.sweep import ReceiptSweepWorkflow
from workflows.tag_item import TagItemWorkflow

ROOT = Path(__file__).resolve().parents[1]
#: The modules that name a workflow instead of importing it.
BY_NAME = ("tollgate.intake.publish", "tollgate.intake.broker", "tollgate.intake.items",
           "tollgate.ops.actions", "tollgate.ops.unresolved_write")


@pytest.mark.parametrize(("name", "defined", "sent", "read"), [
    (FAN_OUT_WORKFLOW, FanOutWorkflow, FanOutRequest, FanOutResult),
    (TAG_ITEM_WORKFLOW, TagItemWorkflow, TagItemRequest, TagItemResult),
    (SWEEP_WORKFLOW, ReceiptSweepWorkflow, SweepRequest, SweepReport),
    (RECONCILE_WORKFLOW, ReconcileWriteWorkflow, ReconcileRequest, ReconcileResult),
])
def test_each_name_is_its_workflow_s_own(name: str, defined: type, sent: type,
                                         read: type) -> None:
    definition = workflow._Definition.must_from_class(defined)
    assert definition.name == name
    hints: dict[str, Any] = get_type_hints(defined.run)  # type: ignore[attr-defined]
    assert hints.pop("return") is read
    assert list(hints.values()) == [sent]


def test_what_names_a_workflow_imports_none() -> None:
    """Only the search attributes' typed keys (a fan-out is findable by tenant and type); no
    activity at all: a replay's request fingerprint is ``policies.keys``', not the send's."""
    probe = ("import importlib, json, sys\n"
             f"for name in {BY_NAME!r}:\n    importlib.import_module(name)\n"
             "print(json.dumps(sorted(m for m in sys.modules"
             " if m.split('.')[0] in ('workflows', 'activities'))))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,  # noqa: S603
                          text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == ["workflows", "workflows.search_attributes"]
