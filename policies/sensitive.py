"""Secrets, contact data and links in text: what they look like, and masking them. Pure.

Split out of the draft validator so the same patterns mask raw excerpts, mask flag spans and
find what a message may not contain.
"""

from __future__ import annotations

import re

from policies.normalise import fold_text, strip_format

_I = re.IGNORECASE
SECRETS: dict[str, re.Pattern[str]] = {
    "api_key": re.compile(
        r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}"
        r"|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|(?:sk|pk|rk)_live_\w{10,})"
    ),
    "token": re.compile(
        r"\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*|\bbearer\s+[\w.~+/-]{12,}"
        r"|\b(?=[A-Za-z0-9_-]{32,})(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]+",
        _I,
    ),
    "password": re.compile(
        r"\b(?:password|passwd|passcode|pwd|m[aậ]t\s+kh[aẩ]u|api[\s_-]?key|access[\s_-]?key|otp)"
        r"\s*(?:is|l[aà]|:|=)\s*\S+|\b(?:secret|token)\s*[:=]\s*\S+",
        _I,
    ),
    "private_key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
}
CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
URL = re.compile(
    r"(?:\b(?:https?|hxxps?|ftp)://|\bwww\.)[^\s<>\"')\]]+"
    r"|(?<![@\w.-])(?:[a-z0-9-]+\.)+(?:com|net|org|io|vn|co|ly|info|biz|xyz|app|link|me|ru|cn|top|"
    r"site|online|gl|sh|to|cc|tk)\b(?:/[^\s<>\"')\]]*)?"
    # Spelled out to slip past a link filter: "evil dot com", "evil[.]com".
    r"|\b[a-z0-9-]+\s*(?:\[\.\]|\(\.\)|\s+dot\s+)\s*(?:com|net|org|vn|io|ru|xyz|ly|info)\b",
    _I,
)
MARKDOWN_LINK = re.compile(r"\[[^\]\n]{1,80}\]\(\s*[^)\s]+\s*\)")
# Dates and times are digit runs too: blank them out before looking for phone numbers.
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?|\d{1,2}[/.:]\d{2}")
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d\s().-]{6,}\d(?!\w)")


def redact(text: str) -> str:
    """Mask secret-looking strings, card numbers, e-mails and phone numbers (for raw excerpts)."""
    for kind, pattern in SECRETS.items():
        text = pattern.sub(f"[{kind}]", text)
    text = CARD.sub(lambda m: "[card]" if luhn(m.group()) else m.group(), text)
    text = EMAIL.sub("[email]", text)
    return _PHONE.sub(lambda m: "[phone]" if is_phone(m.group()) else m.group(), text)


def secret_kinds(text: str) -> list[str]:
    plain = strip_format(text)
    kinds = [k for k, pattern in SECRETS.items() if pattern.search(text) or pattern.search(plain)]
    if any(luhn(m.group()) for m in CARD.finditer(plain)):
        kinds.append("card_number")
    return kinds


def emails(text: str) -> list[str]:
    return EMAIL.findall(strip_format(text))


def phones(text: str) -> list[str]:
    """Phone-number-looking digit runs, not dates, times, tokens or card numbers."""
    scrubbed = _DATE_TIME.sub(" ", EMAIL.sub(" ", strip_format(text)))
    for pattern in SECRETS.values():  # a token's digits are not a phone number
        scrubbed = pattern.sub(" ", scrubbed)
    return [p for p in _PHONE.findall(scrubbed) if is_phone(p) and not luhn(p)]


def links(text: str) -> list[str]:
    """Every link, read on the folded text so homoglyph hosts fold to what they imitate."""
    return URL.findall(fold_text(text))


def host_allowed(url: str, allowlist: frozenset[str]) -> bool:
    if re.search(r"\[\.\]|\(\.\)|\s+dot\s+", url):
        return False  # a spelled-out link is hiding from exactly this check
    authority = re.sub(r"^(?:[a-z]+://)?", "", url.lower()).split("/")[0]
    # "https://clinic.vn@evil.com" goes to evil.com: the host is after the last "@".
    host = authority.rsplit("@", 1)[-1].split(":")[0]
    return any(host == a or host.endswith("." + a) for a in allowlist)


def digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def is_phone(text: str) -> bool:
    return 9 <= len(digits(text)) <= 15


def luhn(text: str) -> bool:
    numbers = [int(d) for d in digits(text)][::-1]
    if not 13 <= len(numbers) <= 19 or len(set(numbers)) == 1:
        return False
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(numbers))
    return total % 10 == 0
