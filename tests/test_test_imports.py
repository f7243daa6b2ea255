"""No test module imports another: what several share (a helper, a constant, a fixture) lives in
a support module beside them (``tests/cli/ops_status_support.py``), so moving, renaming or
deleting one test module never breaks another, and pytest never sees one module's tests through
another's imports."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _test_module(name: str | None) -> bool:
    return bool(name) and name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")


def test_no_module_under_tests_imports_a_test_module() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                # ``from tests.cli.test_x import y`` and ``from tests.cli import test_x`` alike
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            found += [f"{path.relative_to(TESTS)}:{node.lineno} {name}"
                      for name in names if _test_module(name)]
    assert found == [], "\n".join(found)


def test_shared_test_code_has_its_asserts_explained() -> None:
    """A support module's failed assert shows its values, as a test module's does
    (tests/__init__.py registers them for pytest's assertion rewriting)."""
    import tests.cli.ops_status_support as support
    import tests.eventually as top_level

    # A module pytest rewrote carries the helpers its rewritten asserts call.
    assert "@py_builtins" in vars(support)
    assert "@py_builtins" in vars(top_level)
