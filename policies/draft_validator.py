"""The gate between a model's draft and a reviewer. Pure: no I/O, callable from a workflow.

A finding is ``code`` or ``code:detail``; the detail is only ever a source-ref key or a fixed
word, never text from the draft, so findings can be logged and stored as they are. Empty list =
the draft may go to review. What is checked and why (docs/drafting.md has the long version):

    unknown_source_ref:<ref>  a cited fact the model was not given (it made it up)
    link_not_allowed          a link whose host is not on the tenant's allowlist (phishing)
    secret_like:<kind>        API keys, tokens, passwords, private keys, card numbers
    foreign_pii:<kind>        e-mails/phones not in the context, a greeting to someone else
    injection_in_output       instructions aimed at a model or a tool inside the draft
    injection_in_context:<k>  the same inside a context fact: the model is not called at all
    secret_in_context:<k>     a credential in a context fact: the model must never see one
    tool_call                 tool/function-call syntax in the text
    action_claim              "we have booked/sent/charged": only code says an action happened
"""

from __future__ import annotations

import re
import unicodedata

from contracts import Draft, DraftRequest

_I = re.IGNORECASE
_REF = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+){1,4}$")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u00ad"))

# Matched on text folded to ASCII (diacritics stripped, NFKC), so "bỏ qua" and "bo qua" and
# full-width letters all hit the same pattern.
_INJECTION = re.compile(
    "|".join(
        [
            r"\b(?:ignore|disregard|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
            r"(?:previous|prior|above|earlier|preceding|system|safety|original|these|your)?"
            r"\s*(?:instructions?|rules|prompts?|directions|guidelines|context|constraints)",
            r"\bforget\s+(?:all|everything|what)\b[^.\n]{0,30}\b(?:told|instructions|rules|above)",
            r"\bsystem\s+prompt\b",
            r"\b(?:reveal|print|show|repeat|output|leak)\s+(?:me\s+)?(?:your|the)\s+(?:hidden\s+)?"
            r"(?:system\s+)?(?:prompt|instructions)",
            r"\b(?:new|updated|real|override)\s+instructions?\s*:",
            r"\byou\s+are\s+now\s+(?:dan\b|in\s+\w+\s+mode|an?\s+(?:unrestricted|unfiltered|"
            r"different|new|evil)\b)",
            r"\b(?:developer|god|jailbreak|dan)\s+mode\b|\bjailbr[eo]ak|\bdo\s+anything\s+now\b",
            r"\bpretend\s+(?:to\s+be|you\s+are)\b|\bact\s+as\s+(?:an?\s+)?(?:admin|system|root)",
            r"^\s*(?:system|assistant|developer)\s*:",
            r"<\|[a-z_]+\|>|\[/?inst\]|<</?sys>>|#{2,}\s*(?:system|instruction)",
            r"</?\s*(?:system|instructions?|context|prompt)\s*>|<<<|>>>",
            r"\b(?:send|forward|email|export|share|leak)\b[^.\n]{0,60}\b(?:all|every|other)\s+"
            r"(?:customers?|clients?|users?|contacts?|records?|phone|emails?)",
            r"\b(?:call|use|invoke|run|execute|trigger)\s+(?:the\s+)?[\w-]*\s*(?:tool|function)\b",
            r"\bbo\s+qua\s+(?:moi|tat\s+ca|cac|nhung)?\s*(?:huong\s+dan|chi\s+dan|quy\s+tac|lenh)",
            r"\b(?:quen|phot\s+lo)\s+(?:di\s+)?(?:moi|tat\s+ca|cac)\s+(?:huong\s+dan|chi\s+dan)",
            r"\bhuong\s+dan\s+moi\s*:|\bbay\s+gio\s+ban\s+la\b|\bloi\s+nhac\s+he\s+thong\b",
        ]
    ),
    _I | re.MULTILINE,
)
_TOOL_SYNTAX = re.compile(
    r'"(?:tool_calls?|function_call|tool_use)"|<\s*/?\s*(?:function_calls|tool_use|invoke|'
    r'antml:[a-z_]+)\b|\bfunctions\.\w+\s*\(|\{\s*"(?:tool|function|name|action)"\s*:',
    _I,
)
_ACTION_CLAIM = re.compile(
    r"\b(?:i|we)(?:\s+have|'ve)?\s+(?:already\s+)?(?:booked|scheduled|cancell?ed|charged|"
    r"refunded|sent|paid|confirmed|rescheduled)\s+(?:your|the|an?|it|this|\w+'s)\b"
    r"|\b(?:appointment|booking|visit|payment|refund|order)\s+(?:is|has\s+been|was)\s+"
    r"(?:now\s+)?(?:confirmed|booked|scheduled|processed|completed|cancell?ed|paid)\b",
    _I,
)
_SECRETS: dict[str, re.Pattern[str]] = {
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
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(
    r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"')\]]+"
    r"|(?<![@\w.-])(?:[a-z0-9-]+\.)+(?:com|net|org|io|vn|co|ly|info|biz|xyz|app|link|me|ru|cn|top|site|"
    r"online|gl|sh|to|cc|tk)\b(?:/[^\s<>\"')\]]*)?",
    _I,
)
# Dates and times are digit runs too: blank them out before looking for phone numbers.
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?|\d{1,2}[/.:]\d{2}")
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d\s().-]{6,}\d(?!\w)")
_GREETING = re.compile(
    r"^\W*(?i:hi|hello|hey|dear|good\s+(?:morning|afternoon|evening)|xin\s+chao|chao),?"
    r"(?:\s+(?i:anh|chi|em|ban|co|chu|mr\.?|ms\.?|mrs\.?))?\s+([A-Z][\w'-]*)"
)
_NOT_NAMES = frozenset({"there", "team", "friend", "friends", "valued", "customer", "pet", "sir"})


def scan_context_for_injection(context: dict[str, str]) -> list[str]:
    """Findings for context facts that carry instructions or credentials (keys sorted)."""
    findings = []
    for key in sorted(context):
        folded = _fold(context[key])
        if _INJECTION.search(folded) or _TOOL_SYNTAX.search(folded):
            findings.append(f"injection_in_context:{_safe_ref(key)}")
        if _secret_kinds(context[key]):
            findings.append(f"secret_in_context:{_safe_ref(key)}")
    return findings


def validate_draft(
    draft: Draft,
    request: DraftRequest,
    *,
    link_allowlist: frozenset[str] = frozenset(),
    recipient_allowlist: frozenset[str] = frozenset(),
) -> list[str]:
    """Check a parsed draft against the request it answers. Empty list = ok.

    Args:
        link_allowlist: hosts a link may point at (a subdomain of an entry counts); none by
            default, so a draft with any link fails until a tenant's policy allows its domain.
        recipient_allowlist: e-mails or phone numbers the message may name besides the ones in
            the context (the clinic's own front desk, for instance).
    """
    findings = [
        f"unknown_source_ref:{_safe_ref(ref)}"
        for ref in dict.fromkeys(draft.source_refs)
        if ref not in request.context
    ]
    text = "\n".join([draft.message, draft.reason, *draft.unknowns])
    folded = _fold(text)
    findings += [f"secret_like:{kind}" for kind in _secret_kinds(text)]
    findings += _foreign_pii(draft.message, request.context, recipient_allowlist)
    if any(not _host_allowed(url, link_allowlist) for url in _URL.findall(text)):
        findings.append("link_not_allowed")
    if _INJECTION.search(folded):
        findings.append("injection_in_output")
    if _TOOL_SYNTAX.search(folded):
        findings.append("tool_call")
    if _ACTION_CLAIM.search(folded):
        findings.append("action_claim")
    return findings


def redact(text: str) -> str:
    """Mask secret-looking strings, card numbers, e-mails and phone numbers (for raw excerpts)."""
    for kind, pattern in _SECRETS.items():
        text = pattern.sub(f"[{kind}]", text)
    text = _CARD.sub(lambda m: "[card]" if _luhn(m.group()) else m.group(), text)
    text = _EMAIL.sub("[email]", text)
    return _PHONE.sub(lambda m: "[phone]" if _is_phone(m.group()) else m.group(), text)


def _secret_kinds(text: str) -> list[str]:
    folded = _fold(text)
    kinds = [k for k, pattern in _SECRETS.items() if pattern.search(text) or pattern.search(folded)]
    if any(_luhn(m.group()) for m in _CARD.finditer(text)):
        kinds.append("card_number")
    return kinds


def _foreign_pii(message: str, context: dict[str, str], allowed: frozenset[str]) -> list[str]:
    known = " ".join(context.values()).lower()
    known_digits = {_digits(v) for v in [*context.values(), *allowed] if len(_digits(v)) >= 7}
    findings = []
    if any(e.lower() not in known and e.lower() not in allowed for e in _EMAIL.findall(message)):
        findings.append("foreign_pii:email")
    scrubbed = _DATE_TIME.sub(" ", _EMAIL.sub(" ", message))
    for pattern in _SECRETS.values():  # a token's digits are not a phone number
        scrubbed = pattern.sub(" ", scrubbed)
    phones = [p for p in _PHONE.findall(scrubbed) if _is_phone(p) and not _luhn(p)]
    if any(_digits(p) not in known_digits for p in phones):
        findings.append("foreign_pii:phone")
    greeted = _GREETING.match(_fold(message))
    if greeted and "crm.first_name" in context:
        name = greeted.group(1).lower().removesuffix("'s")
        if name not in _fold(known) and name not in _NOT_NAMES:
            findings.append("foreign_pii:name")
    return findings


def _host_allowed(url: str, allowlist: frozenset[str]) -> bool:
    authority = re.sub(r"^(?:[a-z]+://)?", "", url.lower()).split("/")[0]
    # "https://clinic.vn@evil.com" goes to evil.com: the host is after the last "@".
    host = authority.rsplit("@", 1)[-1].split(":")[0]
    return any(host == a or host.endswith("." + a) for a in allowlist)


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.translate(_ZERO_WIDTH)).replace("đ", "d")
    text = "".join(c for c in text if not unicodedata.combining(c)).replace("Đ", "D")
    return unicodedata.normalize("NFKC", text)


def _safe_ref(ref: str) -> str:
    return ref if _REF.match(ref) and len(ref) <= 64 else "_invalid"


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _is_phone(text: str) -> bool:
    return 9 <= len(_digits(text)) <= 15


def _luhn(text: str) -> bool:
    digits = [int(d) for d in _digits(text)][::-1]
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(digits))
    return total % 10 == 0
