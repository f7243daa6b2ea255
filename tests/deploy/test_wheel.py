"""What ships apart from the tools (ADR 0023): the wheel leaves out the dev stack, the
stand-ins, bench and chaos, and its `tollgate` works without them and names none of them."""

from __future__ import annotations

import re
from pathlib import Path

from tests.deploy.files import ROOT
from tests.deploy.wheel import (
    TOOLS,
    Installed,
    build_stage_sources,
    lay_out_standins_image,
    wheel_files,
)

TOOL_COMMANDS = {"dev", "demo", "bench", "chaos"}
SHIPPED_COMMANDS = {"submit", "review", "ops", "trace", "items", "serve", "certify"}


def commands(help_text: str) -> set[str]:
    """The command names a Click group's --help lists."""
    listed = help_text.split("Commands:", 1)[1]
    return set(re.findall(r"^  (\S+)", listed, re.MULTILINE))


def test_the_image_builds_from_every_shipped_package() -> None:
    assert {"contracts", "policies", "adapters", "activities", "workflows", "tollgate",
            "pyproject.toml"} <= set(build_stage_sources())


def test_the_wheel_holds_no_tool_package(installed: Installed) -> None:
    files = wheel_files(installed.wheel)
    assert "tollgate/cli/__init__.py" in files and "worker.py" in files
    assert "adapters/postgres/migrations/0001_init.sql" in files
    assert [f for f in files if f.startswith(TOOLS)] == []
    assert not any((installed.target / tool).exists() for tool in TOOLS)


def test_the_installed_cli_works_without_the_tools_and_names_none(installed: Installed) -> None:
    said = installed.tollgate("--help")
    assert said.returncode == 0, said.stderr
    assert commands(said.stdout) >= SHIPPED_COMMANDS
    assert not re.search(rf"\b({'|'.join(TOOL_COMMANDS)})\b", said.stdout), said.stdout
    said = installed.tollgate("items", "--help")
    assert said.returncode == 0, said.stderr
    assert "bench" not in said.stdout
    # The same check on the checkout sees the tools: what the wheel lacks is what is missing.
    said = installed.tollgate("--help", path=ROOT)
    assert commands(said.stdout) >= TOOL_COMMANDS


def test_the_standins_image_finds_the_stand_ins_beside_the_installed_wheel(
        installed: Installed, tmp_path: Path) -> None:
    script = lay_out_standins_image(tmp_path)
    # As `python standins.py` does: the script's folder first on the path. Its imports run, its
    # servers (the __main__ block) do not.
    said = installed.run("-c", "import runpy, sys; sys.path.insert(0, sys.argv[1]);"
                         " found = runpy.run_path(sys.argv[2])['start_standins'];"
                         " print(found.__module__, sys.modules['tollgate'].__file__)",
                         str(script.parent), str(script))
    assert said.returncode == 0, said.stderr
    module, package = said.stdout.split()
    assert module == "tollgate.dev.standins"
    assert Path(package).is_relative_to(script.parent)
