"""A tenant's own contact points: the phone numbers, e-mail addresses and web domains the
tenant publishes (its hotline, its booking site). The draft validator never counts them as
foreign (issue 28, item 3; ADR 0039).

Each point has a ``key``: the form two writings of the same point share, so the store's
uniqueness (one live row per tenant, kind and key) and the validator's match agree. It lives
here, at the bottom, because both the PostgreSQL store and the pure validator need it and
neither may import the other.

A phone number's key is its national digits: the country calling code dropped when the number
is written international (``+84 …``, ``0084 …``), then any leading trunk zero, so
``+84 28 3822 1234`` and ``028 3822 1234`` share ``2838221234``, and ``+1 555 0100`` and
``555 0100`` share ``5550100``. Country calling codes are prefix-free (ITU-T E.164), so the
code of an international number is found from its first digits alone: ``_CC_ONE``, ``_CC_TWO``
and three digits for every other start.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import StringConstraints, model_validator

from contracts.base import Frozen

ContactKind = Literal["phone", "email", "domain"]
CONTACT_KINDS: tuple[ContactKind, ...] = ("phone", "email", "domain")
#: More than a tenant publishes; a bound on what a read carries into a workflow's history.
MAX_CONTACTS_PER_TENANT = 50

_CC_ONE = frozenset("17")
_CC_TWO = frozenset({
    "20", "27", "30", "31", "32", "33", "34", "36", "39", "40", "41", "43", "44", "45", "46",
    "47", "48", "49", "51", "52", "53", "54", "55", "56", "57", "58", "60", "61", "62", "63",
    "64", "65", "66", "81", "82", "84", "86", "90", "91", "92", "93", "94", "95", "98",
})
# Only what people write in a number: digits, spaces, + ( ) . - / (an extension is refused).
_PHONE_TEXT = re.compile(r"\+?[\d\s().\-/]+")
_EMAIL = re.compile(r"[\w.+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+")
_DOMAIN = re.compile(r"(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")


def country_code_length(digits: str) -> int:
    """How many leading digits of an international number are its country calling code."""
    if digits[:1] in _CC_ONE:
        return 1
    return 2 if digits[:2] in _CC_TWO else 3


def phone_key(text: str) -> str | None:
    """The national digits of a written phone number, or None when it is not one."""
    text = text.strip()
    if not _PHONE_TEXT.fullmatch(text):
        return None
    digits = re.sub(r"\D", "", text)
    if text.startswith("+") or digits.startswith("00"):
        digits = digits.lstrip("0") if not text.startswith("+") else digits
        digits = digits[country_code_length(digits):]
    national = digits.lstrip("0")
    return national if 6 <= len(national) <= 14 else None


def same_phone(found: str, key: str) -> bool:
    """Whether a phone key found in text is the point keyed ``key``: the same national digits,
    or those digits behind a country code written without its ``+`` (``84 28 3822 1234``)."""
    if found == key:
        return True
    extra = len(found) - len(key)
    return 0 < extra <= 3 and found.endswith(key) and country_code_length(found) == extra


def contact_key(kind: ContactKind, value: str) -> str | None:
    """The key of ``value`` as a contact point of ``kind``, or None when it is not one."""
    text = value.strip()
    if kind == "phone":
        return phone_key(text)
    lowered = text.lower()
    if kind == "email":
        return lowered if len(lowered) <= 254 and _EMAIL.fullmatch(lowered) else None
    host = re.sub(r"^[a-z][a-z0-9+.-]*://", "", lowered).split("/")[0].split(":")[0].rstrip(".")
    return host if _DOMAIN.fullmatch(host) else None


class TenantContact(Frozen):
    """One contact point of a tenant, as the operator wrote it and by its key."""

    kind: ContactKind
    value: Annotated[str, StringConstraints(min_length=3, max_length=254)]
    key: str = ""

    @model_validator(mode="before")
    @classmethod
    def _keyed(cls, data: Any) -> Any:
        # The key is always recomputed, never taken on trust: a stored or carried point whose
        # key disagrees with its value would match the wrong numbers.
        if (isinstance(data, dict) and data.get("kind") in CONTACT_KINDS
                and isinstance(data.get("value"), str)):
            key = contact_key(data["kind"], data["value"])
            if key is None:
                raise ValueError(f"not a {data['kind']} a message could name")
            data = {**data, "key": key}
        return data
