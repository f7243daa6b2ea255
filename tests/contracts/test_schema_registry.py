"""The committed event schemas match the models, and a change that would break a consumer of
an older version is caught (deliberately incompatible models below must fail the check)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from contracts.base import Identifier
from contracts.fanout import OrderLine, OrderPlacedV1
from policies.schema_compat import breaking_changes
from tollgate.intake.schema_registry import REGISTRY, check, generate, render


def test_every_committed_schema_matches_its_model() -> None:
    assert check() == []


class _Base(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", title="OrderPlacedV1")


class NoTotal(_Base):
    order_id: Identifier
    customer_id: Identifier
    lines: list[OrderLine] = Field(min_length=1, max_length=200)


class WithCoupon(_Base):
    order_id: Identifier
    customer_id: Identifier
    lines: list[OrderLine] = Field(min_length=1, max_length=200)
    total_cents: Annotated[int, Field(ge=0)]
    coupon: str | None = None


class TotalAsText(_Base):
    order_id: Identifier
    customer_id: Identifier
    lines: list[OrderLine] = Field(min_length=1, max_length=200)
    total_cents: str


class MoreLines(_Base):
    order_id: Identifier
    customer_id: Identifier
    lines: list[OrderLine] = Field(min_length=0, max_length=500)
    total_cents: Annotated[int, Field(ge=0)]


class FewerLines(_Base):
    """Narrower than v1 and described differently: old consumers accept all it allows."""

    order_id: Identifier
    customer_id: Identifier
    lines: list[OrderLine] = Field(min_length=1, max_length=50)
    total_cents: Annotated[int, Field(ge=0, le=10_000_000)]


V1 = generate(OrderPlacedV1)


@pytest.mark.parametrize(("model", "finding"), [
    (NoTotal, "$.total_cents: no longer required (removed)"),
    (WithCoupon, "$.coupon: new property, and the old schema forbids extras"),
    (TotalAsText, "$.total_cents: type widened by ['string']"),
    (MoreLines, "$.lines: maxItems raised from 200 to 500"),
])
def test_a_change_that_breaks_old_consumers_is_found(model: type[BaseModel],
                                                     finding: str) -> None:
    assert finding in breaking_changes(V1, generate(model))


def test_a_narrower_model_is_compatible() -> None:
    assert breaking_changes(V1, generate(FewerLines)) == []


def test_a_widened_enum_in_a_nested_definition_is_found() -> None:
    old: dict[str, Any] = {"$defs": {"K": {"enum": ["a", "b"]}},
                           "properties": {"k": {"$ref": "#/$defs/K"}}, "type": "object"}
    new = json.loads(json.dumps(old))
    new["$defs"]["K"]["enum"].append("c")
    assert breaking_changes(old, new) == ["$.k: enum widened by ['c']"]


def test_check_reports_a_breaking_model_change_in_one_line(tmp_path: Path) -> None:
    for stem, model in REGISTRY.items():
        (tmp_path / f"{stem}.json").write_text(render(generate(model)))
    assert check(tmp_path) == []
    # v1 as committed allowed 50 lines; the model now allows 200: a v1 consumer would refuse.
    (tmp_path / "ORDER_PLACED.v1.json").write_text(render(generate(FewerLines)))
    problems = check(tmp_path)
    assert len(problems) == 1 and problems[0].startswith("ORDER_PLACED.v1: breaks consumers")
    assert "\n" not in problems[0]
