"""The settings tree as rows: every variable with its section, type, default and description
(docs/config.md), and the effective value with where it came from (``tollgate config show``)."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from tollgate.config.settings import _KEYWORDS, SECTIONS, Settings

MASK = "********"
#: The root's own fields: the paths every section shares.
_ROOT = ("state_dir", "tenants_file")


@dataclass(frozen=True)
class Variable:
    section: str
    field: str
    name: str
    kind: str
    default: str
    description: str
    secret: bool


def variables() -> Iterator[Variable]:
    """Every variable once, in the order of the tree (a variable two sections read is listed
    where it first appears)."""
    seen: set[str] = set()
    rows = [("paths", name, _KEYWORDS[name], Settings.model_fields[name]) for name in _ROOT]
    rows += [(section, name, model.variable(name), info)
             for section, model in SECTIONS.items() for name, info in model.model_fields.items()]
    for section, name, variable, info in rows:
        if variable in seen:
            continue
        seen.add(variable)
        yield Variable(section, name, variable, _kind(info.annotation), _default(info),
                       info.description or "", _is_secret(info.annotation))


def effective(s: Settings) -> dict[str, list[dict[str, str]]]:
    """Section -> its variables' values as text, secrets masked, with their source."""
    shown: dict[str, list[dict[str, str]]] = {}
    for v in variables():
        model: BaseModel = s if v.section == "paths" else getattr(s, v.section)
        value = getattr(model, v.field)
        shown.setdefault(v.section, []).append(
            {"variable": v.name, "value": _text(value), "source": s.source(v.name)})
    return shown


def _text(value: Any) -> str:
    if isinstance(value, SecretStr):
        return MASK
    if value is None:
        return ""
    if isinstance(value, dict):
        return ", ".join(f"{k}={_text(v)}" for k, v in value.items())
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return str(value)


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None or info.default in (None, {}, ()):
        return ""
    if isinstance(info.default, Path):
        return str(info.default)
    return _text(info.default)


def _kind(annotation: Any) -> str:
    """A reader's name for a field's type: ``port``, ``secret``, ``text``, ``JSON object``."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        return _kind(args[0])
    if typing.get_origin(annotation) is typing.Literal:
        return " | ".join(str(a) for a in args)
    if typing.get_origin(annotation) is dict:
        return "JSON object" if args and isinstance(args[-1], type) and issubclass(
            args[-1], BaseModel) else "name=number list"
    if typing.get_origin(annotation) is tuple:
        return "comma-separated list"
    names = {str: "text", int: "integer", float: "number", bool: "flag", Path: "path",
             SecretStr: "secret"}
    return names.get(annotation, str(annotation))


def _is_secret(annotation: Any) -> bool:
    return annotation is SecretStr or SecretStr in typing.get_args(annotation)
