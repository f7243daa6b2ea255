"""docs/config.md, generated from the settings tree: ``python -m tollgate.config.docs --write``
rewrites it, ``--check`` exits 1 when the committed file is stale (tests/config does the same)."""

from __future__ import annotations

import sys
from pathlib import Path

from tollgate.config.tree import variables

DOC = Path(__file__).resolve().parents[2] / "docs" / "config.md"

_HEAD = """# Configuration

Generated from the settings tree (`tollgate/config/`) by `python -m tollgate.config.docs --write`;
do not edit by hand. Every variable Tollgate reads is here; nothing else reads the environment.
`tollgate config show [--json]` prints the effective values, secrets masked, and where each came
from (env, the endpoints file of a running `tollgate dev`, or the default). A refused value stops
the command or worker with one line naming the variable (`tollgate` exits 7, docs/cli.md).
temporalio also reads its own client variables (`TEMPORAL_TLS_*`, `TEMPORAL_API_KEY`, …) and
profile file: see docs/deploy.md.
"""


def render() -> str:
    out = [_HEAD]
    section = None
    for v in variables():
        if v.section != section:
            section = v.section
            out.append(f"\n## {section}\n\n| variable | type | default | description |\n"
                       "|---|---|---|---|")
        default = f"`{v.default}`" if v.default else ""
        out.append(f"| `{v.name}` | {v.kind} | {default} | "
                   f"{v.description.replace('|', '&#124;')} |")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--write"]:
        DOC.write_text(text)
        return 0
    if argv == ["--check"]:
        if DOC.exists() and DOC.read_text() == text:
            return 0
        print(f"{DOC} is stale: run python -m tollgate.config.docs --write", file=sys.stderr)
        return 1
    print("usage: python -m tollgate.config.docs --write | --check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
