"""Workflow modules run with sandbox passthrough (imported once per worker, not per run), so a
mutable module-level value would be shared between workflow runs. Keep them constants."""

from __future__ import annotations

import importlib
import pkgutil
from types import MappingProxyType, ModuleType

import workflows

_MUTABLE = (list, dict, set, bytearray)


def workflow_modules() -> list[ModuleType]:
    return [importlib.import_module(f"workflows.{m.name}")
            for m in pkgutil.iter_modules(workflows.__path__)]


def test_workflow_modules_hold_no_mutable_module_state() -> None:
    offenders = [
        f"{module.__name__}.{name}"
        for module in workflow_modules()
        for name, value in vars(module).items()
        if not name.startswith("__") and isinstance(value, _MUTABLE)
        and not isinstance(value, MappingProxyType)
    ]
    assert offenders == []
