"""The event schema registry: JSON Schemas of the envelopes and payloads, per type and version,
generated from the pydantic models and committed under ``contracts/schemas/``.

    python -m tollgate.intake.schema_registry          check: exit 1 listing what is stale
    python -m tollgate.intake.schema_registry --write  (re)write the files of the models

A committed file is the contract consumers of that version were built against. ``make test``
(tests/contracts/test_schema_registry.py) fails when a model no longer matches its file: with the
breaking findings (``policies.schema_compat``) when old consumers would reject new data, else
asking for a regeneration. A breaking change is a new version: a new model and a new entry.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from contracts.events import EventEnvelope
from contracts.fanout import BusinessEvent, OrderPlacedV1
from contracts.triage import MessageReceivedV1
from policies.schema_compat import breaking_changes
from policies.schemas import CareDueV3

#: File stem -> model. Envelopes are ``envelope.<name>.v<N>``; payloads ``<TYPE>.v<N>``.
REGISTRY: dict[str, type[BaseModel]] = {
    "envelope.signed.v1": EventEnvelope,
    "envelope.bus.v1": BusinessEvent,
    "CARE_DUE.v3": CareDueV3,
    "ORDER_PLACED.v1": OrderPlacedV1,
    "MESSAGE_RECEIVED.v1": MessageReceivedV1,
}


def schemas_dir() -> Path:
    return Path(str(resources.files("contracts") / "schemas"))


def generate(model: type[BaseModel]) -> dict[str, Any]:
    """The schema of what a producer may send (validation mode), keys sorted for stable diffs."""
    return json.loads(json.dumps(model.model_json_schema(mode="validation"), sort_keys=True))


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def check(folder: Path | None = None) -> list[str]:
    """One line per registry entry whose committed file is missing, breaking or stale."""
    folder = folder or schemas_dir()
    problems: list[str] = []
    for stem, model in REGISTRY.items():
        path = folder / f"{stem}.json"
        if not path.exists():
            problems.append(f"{stem}: not committed (run --write)")
            continue
        committed, current = json.loads(path.read_text(encoding="utf-8")), generate(model)
        if committed == current:
            continue
        breaking = breaking_changes(committed, current)
        if breaking:
            problems.append(f"{stem}: breaks consumers of this version: {'; '.join(breaking)} "
                            "(make a new version instead)")
        else:
            problems.append(f"{stem}: compatible change not committed (run --write)")
    return problems


def write(folder: Path | None = None) -> list[str]:
    folder = folder or schemas_dir()
    folder.mkdir(parents=True, exist_ok=True)
    for stem, model in REGISTRY.items():
        (folder / f"{stem}.json").write_text(render(generate(model)), encoding="utf-8")
    return sorted(REGISTRY)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tollgate.intake.schema_registry",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the schema files")
    args = parser.parse_args(argv)
    if args.write:
        print("wrote", ", ".join(write()))
        return 0
    problems = check()
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
