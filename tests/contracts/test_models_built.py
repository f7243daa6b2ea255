"""Every contract's schema is built once, when it is defined: the Temporal SDK reads and writes a
model through a TypeAdapter, which builds an incomplete model's schema for itself each time and
leaves the model incomplete, so each converter the SDK makes (one per replayed run and
activation) built it again. A deferred build (pydantic ``defer_build``, tried for the CLI's
import time) cost replay 30-45 % more CPU per history; an annotation that cannot be resolved
when its model is defined would cost the same."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from pydantic import BaseModel

import contracts


def _models() -> list[type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for info in pkgutil.iter_modules(contracts.__path__, "contracts."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseModel) and obj.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    return list(found.values())


def test_every_contract_model_is_complete_once_imported() -> None:
    models = _models()
    assert len(models) > 50, len(models)
    incomplete = sorted(f"{m.__module__}.{m.__qualname__}" for m in models
                        if not m.__pydantic_complete__)
    assert incomplete == [], incomplete
