"""``contracts`` re-exports its models by name, resolved when first asked for (PEP 562): a
process that needs one contract module no longer builds every model of the package (ADR 0068)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import contracts
from tests.cli.helpers import ROOT


def test_every_re_exported_name_is_the_object_its_module_defines() -> None:
    for name in contracts.__all__:
        home = importlib.import_module(contracts._HOME[name])
        assert getattr(contracts, name) is getattr(home, name), name
    assert sorted(contracts._HOME) == sorted(contracts.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        contracts.NoSuchContract  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchContract" in str(exc)
    else:
        raise AssertionError("contracts.NoSuchContract resolved")


def test_importing_one_contract_module_builds_no_other() -> None:
    probe = ("import json, sys; import contracts.base; "
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith('contracts'))))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,  # noqa: S603
                          text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == ["contracts", "contracts.base"]
