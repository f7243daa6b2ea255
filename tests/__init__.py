"""Tollgate's tests.

pytest rewrites the asserts of test modules and conftest files only; the code tests share lives
beside them (``*_support.py``, ``tests/eventually.py``, …: no test module imports another), and its
asserts are rewritten too, so a failing check there explains itself as one in a test does. Every
subfolder and top-level module is registered here, before any of them is imported.
"""

from pathlib import Path

import pytest

_HERE = Path(__file__).parent
pytest.register_assert_rewrite(*sorted(
    f"tests.{path.stem}" for path in _HERE.iterdir()
    if (path.is_dir() and not path.name.startswith(("_", ".")))
    or (path.suffix == ".py" and not path.name.startswith(("test_", "conftest", "__")))))
