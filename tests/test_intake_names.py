"""`tollgate submit` offers an event to the workflow and its update by name, so that it need not
import the workflow (and every activity, policy and contract it uses): the names must be the
workflow's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from temporalio import workflow

from tollgate.intake.submit import EVENT_WORKFLOW, INTAKE_UPDATE
from workflows.process_event import ProcessEventWorkflow

ROOT = Path(__file__).resolve().parents[1]


def test_the_names_are_the_workflow_s_own() -> None:
    definition = workflow._Definition.must_from_class(ProcessEventWorkflow)
    assert definition.name == EVENT_WORKFLOW
    assert INTAKE_UPDATE in definition.updates


def test_the_intake_imports_no_workflow_or_activity() -> None:
    """Only the search attributes' typed keys, which the intake reads a closed run's state by."""
    probe = ("import json, sys; import tollgate.intake.submit; print(json.dumps(sorted(m for m "
             "in sys.modules if m.split('.')[0] in ('workflows', 'activities'))))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,  # noqa: S603
                          text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == ["workflows", "workflows.search_attributes"]
