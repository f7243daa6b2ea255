"""Would a new JSON Schema break a consumer that validates with the old one?

A consumer built against version N validates what it receives with N's schema. A producer
change is compatible only if everything the new schema accepts, the old one accepts too (the
new one is no wider). Checked node by node, following ``$ref`` into ``$defs``:

    type        new types must be a subset of the old types
    enum/const  new values must be a subset of the old values
    properties  a property the old schema had must keep a compatible schema; a property only
                the new schema has breaks a consumer whose schema forbids extra properties
    required    every property the old schema required stays required
    bounds      maxLength/maxItems/maximum may not grow, minLength/minItems/minimum may not
                shrink; pattern/format may not change or disappear
    anyOf       each new branch must fit some old branch

Pure: JSON in, a list of findings (``path: what``) out; empty means compatible. It errs on the
strict side: a finding it cannot prove harmless is reported, and the fix is a new version.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

_UPPER = ("maxLength", "maxItems", "maximum", "exclusiveMaximum")
_LOWER = ("minLength", "minItems", "minimum", "exclusiveMinimum")


def breaking_changes(old: Schema, new: Schema) -> list[str]:
    """Findings that would make ``old``'s consumers reject data valid under ``new``."""
    out: list[str] = []
    _node(old, new, old.get("$defs", {}), new.get("$defs", {}), "$", out, set())
    return out


def _resolve(node: Schema, defs: dict[str, Any]) -> Schema:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return dict(defs.get(ref.removeprefix("#/$defs/"), {}))
    return node


def _types(node: Schema) -> set[str] | None:
    t = node.get("type")
    if t is None:
        return None
    return {t} if isinstance(t, str) else set(t)


def _node(old: Schema, new: Schema, od: dict[str, Any], nd: dict[str, Any], path: str,
          out: list[str], seen: set[tuple[str, str]]) -> None:
    key = (str(old.get("$ref")), str(new.get("$ref")))
    if "$ref" in old and "$ref" in new:
        if key in seen:
            return
        seen = seen | {key}
    old, new = _resolve(old, od), _resolve(new, nd)
    if "anyOf" in new or "anyOf" in old:
        _any_of(old, new, od, nd, path, out, seen)
        return
    _scalars(old, new, path, out)
    if "properties" in old or "properties" in new:
        _object(old, new, od, nd, path, out, seen)
    if isinstance(old.get("items"), dict) and isinstance(new.get("items"), dict):
        _node(old["items"], new["items"], od, nd, f"{path}[]", out, seen)


def _scalars(old: Schema, new: Schema, path: str, out: list[str]) -> None:
    ot, nt = _types(old), _types(new)
    if ot is not None:
        # An integer is a number: number -> integer narrows, integer -> number widens.
        wider = (nt or {"any"}) - ot - ({"integer"} if "number" in ot else set())
        if wider:
            out.append(f"{path}: type widened by {sorted(wider)}")
    for word in ("enum", "const"):
        if word in old:
            ov = old[word] if word == "enum" else [old[word]]
            nv = new.get("enum", [new["const"]] if "const" in new else None)
            extra = [v for v in (nv if nv is not None else ["<any>"]) if v not in ov]
            if extra:
                out.append(f"{path}: {word} widened by {extra}")
    for word in _UPPER:
        if word in old and (word not in new or new[word] > old[word]):
            out.append(f"{path}: {word} raised from {old[word]} to {new.get(word, 'none')}")
    for word in _LOWER:
        if word in old and (word not in new or new[word] < old[word]):
            out.append(f"{path}: {word} lowered from {old[word]} to {new.get(word, 'none')}")
    for word in ("pattern", "format"):
        if word in old and new.get(word) != old[word]:
            out.append(f"{path}: {word} changed")


def _object(old: Schema, new: Schema, od: dict[str, Any], nd: dict[str, Any], path: str,
            out: list[str], seen: set[tuple[str, str]]) -> None:
    op, np_ = old.get("properties", {}), new.get("properties", {})
    closed = old.get("additionalProperties") is False
    for name in sorted(np_):
        if name in op:
            _node(op[name], np_[name], od, nd, f"{path}.{name}", out, seen)
        elif closed:
            out.append(f"{path}.{name}: new property, and the old schema forbids extras")
    for name in sorted(set(old.get("required", [])) - set(new.get("required", []))):
        out.append(f"{path}.{name}: no longer required" + ("" if name in np_ else " (removed)"))


def _any_of(old: Schema, new: Schema, od: dict[str, Any], nd: dict[str, Any], path: str,
            out: list[str], seen: set[tuple[str, str]]) -> None:
    olds = old.get("anyOf", [old])
    for i, branch in enumerate(new.get("anyOf", [new])):
        trials = []
        for candidate in olds:
            found: list[str] = []
            _node(candidate, branch, od, nd, path, found, seen)
            trials.append(found)
        if all(trials):
            best = min(trials, key=len)
            out.extend(best if len(olds) == 1 else [f"{path}: anyOf branch {i} fits no old "
                                                     f"branch ({best[0]})"])
