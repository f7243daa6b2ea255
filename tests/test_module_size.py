"""No product module grows past 300 lines. STYLE.md asks for about 200, one concept each;
past 300 a module holds more than one, and the next change to it would have to split it first."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("workflows", "activities", "adapters", "policies", "contracts", "tollgate", "deploy")
LIMIT = 300


def product_modules(root: Path = ROOT) -> list[Path]:
    """Every Python file the product ships or deploys from, tests and caches left out."""
    found = [root / "worker.py", root / "starter.py"]
    for folder in PRODUCT:
        found += [p for p in (root / folder).rglob("*.py") if "__pycache__" not in p.parts]
    return sorted(found)


def too_long(paths: list[Path], limit: int = LIMIT) -> dict[str, int]:
    counts = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
              for p in paths}
    return {name: n for name, n in counts.items() if n > limit}


def test_no_product_module_is_longer_than_300_lines() -> None:
    modules = product_modules()
    assert len(modules) > 300  # the walk found the tree, not an empty folder
    assert too_long(modules) == {}

