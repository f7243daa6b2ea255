"""Named rules for text that tries to steer a model or a reviewer. Pure data and matching.

Every pattern runs on the folded text of ``policies.normalise`` (no format characters, NFKC, no
diacritics, confusables mapped to Latin, case-folded), so it is written once in lower-case
ASCII and matches Vietnamese typed with or without diacritics, homoglyphs and hidden
characters alike. Each rule has a name a reviewer reads next to the span it matched:

    role_marker        a speaker label aimed at a model (``system:``, ``HỆ THỐNG:``) anywhere
    override           ignore/forget/override the instructions or rules (EN and VI)
    approval           mark as reviewed/approved, skip the human check
    disclosure         reveal the prompt, configuration, settings or credentials
    exfiltration       send or list other people's contact data or records
    role_play          "you are now...", jailbreak modes
    tool_call_shape    JSON objects (any keys), function calls, tool tags, chat-template tokens
    encoded_payload    base64 (also split into short chunks) that decodes to readable text

A topic after the instruction noun ("the previous instructions about fasting") is a genuine
note, not an override: that is the one exception the override rules make.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from policies.normalise import Folded, strip_format

_W = r"[^.!?\n]"  # stays inside one sentence

# English and Vietnamese nouns for "the rules a model follows".
_RULE_NOUNS = (
    r"(?:instructions?|rules?|prompts?|directions?|guidelines?|guardrails?|constraints?|"
    r"polic(?:y|ies)|restrictions?|safeguards?|programming|directives?|orders?|"
    r"huong\s+dan|chi\s+dan|quy\s+tac|quy\s+dinh|lenh|chi\s+thi|rang\s+buoc|chinh\s+sach|"
    r"nguyen\s+tac|thiet\s+lap)"
)
_TOPIC_AFTER = r"(?!\s+(?:about|regarding|on|for|concerning|re|ve|nhin|cho\s+viec)\b)"
_VI_DETERMINER = r"(?:moi|tat\s+ca|toan\s+bo|cac|nhung|het|het\s+thay|nay|do|kia|cua\s+ban)"

RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.MULTILINE))
    for name, pattern in [
        ("role_marker", r"(?:^|(?<=[\s.,;!?\"'(\[{>|*#-]))(?:system|assistant|developer|operator|"
         r"administrator|he\s+thong|tro\s+ly|quan\s+tri(?:\s+vien)?|nha\s+phat\s+trien)"
         r"(?:\s+(?:message|notice|note|prompt|override|thong\s+bao))?\s*:"),
        ("role_marker", r"[\[<(]\s*/?\s*(?:system|assistant|developer|he\s+thong|inst|sys)\s*[\])>]"
         r"|<\|[a-z_]+\|>|<</?sys>>|#{2,}\s*(?:system|developer|instruction|assistant)"
         r"|</?\s*(?:system|instructions?|context|prompt)\s*>|<<<|>>>"),
        ("role_marker", r"\b(?:note|message|instructions?|luu\s+y|ghi\s+chu|loi\s+nhan)\s+"
         r"(?:to|for|cho)\s+(?:the\s+)?(?:ai|assistant|model|llm|bot|pipeline|gpt|tro\s+ly)\b"
         r"|\b(?:assistant|tro\s+ly)\s*,?\s+(?:must|should|shall|please|hay|phai|can)\b"),
        ("override", r"\b(?:ignore|disregard|override|overrule|bypass|skip|forget|drop|discard|"
         r"abandon|neglect)\b(?:\s+(?:all|any|every|each|of|the|your|my|these|those|previous|"
         r"prior|above|earlier|preceding|original|initial|system|safety|existing|current|old|"
         r"standing|default))*\s+" + _RULE_NOUNS + r"\b" + _TOPIC_AFTER),
        ("override", r"\bforget\s+(?:about\s+)?(?:everything|anything|all\s+(?:that|of\s+it)|"
         r"what)\b" + _W + r"{0,40}\b(?:told|said|instructed|given|learned|above|before)\b"),
        ("override", r"\boverride\s*[:!]|\b(?:admin|manual|emergency)\s+override\b|\boverride\s+"
         r"(?:mode|safety|the\s+(?:review|approval|gate|filter|checks?|safety))\b"),
        ("override", r"\b(?:new|next|real|actual|updated|revised)\s+(?:task|instructions?|rules?|"
         r"objective|goal|polic(?:y|ies)|orders?)\s*(?::|from\b)"),
        ("override", r"\b(?:bo\s+qua|quen(?:\s+(?:di|het|sach|mat))?|phot\s+lo|lo\s+di|mac\s+ke|"
         r"bat\s+chap|gat\s+bo|xoa\s+bo|ghi\s+de|vo\s+hieu\s+hoa|dung\s+(?:de\s+y|quan\s+tam|"
         r"lam\s+theo|tuan\s+theo)(?:\s+(?:toi|den|vao))?|khong\s+(?:can\s+)?(?:tuan\s+theo|"
         r"lam\s+theo))\s+(?:" + _VI_DETERMINER + r"\s+){1,4}" + _RULE_NOUNS + r"\b"),
        ("override", r"\b(?:bo\s+qua|quen|phot\s+lo|ghi\s+de|bat\s+chap)\s+" + _RULE_NOUNS +
         r"\s+(?:truoc(?:\s+(?:do|day))?|o\s+tren|tren|cu|ban\s+dau|he\s+thong|cua\s+ban|goc)\b"),
        ("override", r"\b(?:huong\s+dan|chi\s+thi|quy\s+tac|lenh)\s+moi\s*:|\bghi\s+de\s+"
         r"(?:chinh\s+sach|quy\s+tac)"),
        ("approval", r"\b(?:mark|flag|set|treat|tag|label|record|consider|classify)\b" + _W +
         r"{0,40}?\b(?:as|to)\s+(?:already\s+|being\s+|fully\s+)?(?:reviewed|approved|checked|"
         r"verified|safe|cleared|pre-?cleared|signed\s+off|vetted|trusted|ok)\b"),
        ("approval", r"\b(?:auto-?approved?|pre-?(?:approved|cleared|reviewed|vetted)|"
         r"self-?approved?|auto-?send)\b|\bapproved?\s+automatically\b"),
        ("approval", r"\b(?:skip|bypass|without|no\s+need\s+for|not?\s+(?:need|require)|"
         r"does\s+not\s+need|doesn'?t\s+need|no\s+longer\s+(?:needs?|requires?))\b" + _W +
         r"{0,30}\b(?:review(?:er|ers)?|approval|human|sign-?off|moderation|human\s+check)\b"),
        ("approval", r"\b(?:manager|supervisor|admin|reviewer|staff|head\s+office)\b" + _W +
         r"{0,20}\b(?:signed\s+off|already\s+approved|approved\s+(?:this|it|the\s+(?:draft|"
         r"message)))|\b(?:route|send|push)\s+(?:it|this)\s+(?:straight|directly)\b|\b(?:reviewer?|"
         r"approval|human)\s+(?:checks?|review|gate|step)s?\s+(?:is|are)\s+(?:disabled|off|"
         r"turned\s+off|not\s+required|waived)|\b(?:approval|review)\s+gate\s+is\s+off\b"),
        ("approval", r"\b(?:tin(?:\s+nhan)?|ban\s+nhap|noi\s+dung)\s+(?:nay\s+)?(?:la\s+)?"
         r"(?:da\s+)?(?:duoc\s+)?(?:kiem\s+duyet|phe\s+duyet|xet\s+duyet)"
         r"|\b(?:danh\s+dau|ghi\s+nhan|coi\s+(?:nhu|la)|dat\s+trang\s+thai)\b" + _W +
         r"{0,30}\b(?:da\s+)?(?:duoc\s+)?(?:duyet|kiem\s+duyet|phe\s+duyet|xem\s+xet|an\s+toan)"
         r"|\b(?:khong\s+can|bo\s+qua|khoi\s+can)\s+(?:buoc\s+)?(?:nguoi\s+)?(?:kiem\s+duyet|"
         r"duyet|xet\s+duyet|phe\s+duyet)|\btu\s+dong\s+(?:duoc\s+)?(?:duyet|phe\s+duyet|gui)"
         r"|\b(?:quan\s+ly|giam\s+doc|sep)\b" + _W + r"{0,20}\b(?:phe\s+duyet|duyet)\s+"
         r"(?:san|roi|ban\s+nhap|tin)|\bgui\s+(?:di\s+)?khong\s+can\s+(?:duyet|kiem)"),
        ("disclosure", r"\bsystem\s+(?:prompt|message)\b|\bloi\s+nhac\s+he\s+thong\b"
         r"|\bwhat\s+(?:were|was|have)\s+you\s+(?:been\s+)?(?:told|given|instructed)"
         r"|\b(?:text|message|words|everything)\s+(?:above|before)\s+this\b"
         r"|\bverbatim\b|\bword\s+for\s+word\b"),
        ("disclosure", r"\b(?:reveal|show|print|paste|dump|display|output|repeat|tell|share|leak|"
         r"give|expose|recite|echo|disclose|copy)\b(?:\s+(?:me|us))?" + _W + r"{0,40}?\b(?:"
         r"configuration|config|settings|setup(?:\s+text)?|system\s+message|initial\s+message|"
         r"api\s+keys?|credentials|environment\s+variables|env\s+vars|passwords?|(?:your|hidden|"
         r"internal|initial|original|starting)\s+(?:\w+\s+)?(?:prompt|instructions|rules|"
         r"guidelines|directives|text))\b"),
        ("disclosure", r"\b(?:tiet\s+lo|hien\s+thi|in\s+ra|cho\s+(?:toi\s+)?xem|chia\s+se|"
         r"cung\s+cap|doc\s+lai|nhac\s+lai|sao\s+chep|dua\s+ra)\b" + _W + r"{0,40}?\b(?:"
         r"cau\s+hinh|loi\s+nhac|prompt|thiet\s+lap|mat\s+khau|khoa\s+api|thong\s+tin\s+dang"
         r"\s+nhap|(?:huong|chi)\s+dan\s+(?:ban\s+dau|he\s+thong|goc|an))"),
        ("exfiltration", r"\b(?:send|write|message|contact|notify|forward|e-?mail|mail|export|"
         r"share|leak|copy|post|upload|include|attach|append|add|list|give|dump|transfer|compile|collect|gather|tell|cc|bcc|"
         r"text|paste)\b" + _W + r"{0,60}?\b(?:all|every|other|others'?|everyone'?s?|entire|"
         r"whole|full|remaining|each)\b" + _W + r"{0,30}?\b(?:customers?|clients?|users?|"
         r"contacts?|records?|owners?|patients?|people|members|numbers|phones?|e-?mails?|"
         r"addresses|details|data|database|list|address\s+book)\b"),
        ("exfiltration", r"\b(?:phone\s+numbers?|e-?mails?|addresses|contact\s+(?:details|info)|"
         r"records|data)\s+of\s+(?:the\s+|all\s+|our\s+)?(?:other|customers|clients|owners|"
         r"patients|people|users|neighbou?rs)\b|\b(?:customer|client|contact|mailing|patient)s?"
         r"\s+(?:list|database|db|records|dump)\b"),
        ("exfiltration", r"\b(?:gui|chuyen|xuat|chia\s+se|sao\s+chep|cung\s+cap|liet\s+ke|kem|"
         r"dinh\s+kem|them|cho\s+biet|tiet\s+lo)\b" + _W + r"{0,60}?(?:\b(?:tat\s+ca|toan\s+bo|"
         r"danh\s+sach|moi)\b" + _W + r"{0,30}?\b(?:khach\s+hang|chu\s+nuoi|nguoi\s+dung|"
         r"danh\s+ba|ho\s+so|du\s+lieu|so\s+dien\s+thoai)|\b(?:khach\s+hang|chu\s+nuoi|"
         r"nguoi\s+dung|nguoi)\s+khac\b)"),
        ("role_play", r"\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+(?:you|answer|reply|respond|"
         r"only|always|say|ignore)\b|\bpretend\s+(?:to\s+be|"
         r"you\s+are)\b|\bact\s+as\s+(?:an?\s+)?(?:admin|system|root|unrestricted)"
         r"|\b(?:developer|god|jailbreak|dan)\s+mode\b|\bjailbr[eo]ak|\bdo\s+anything\s+now\b"
         r"|\bno\s+(?:restrictions|limits|filters)\b|\byou\s+(?:now\s+)?work\s+for\s+me\b"
         r"|\b(?:bay\s+gio|tu\s+gio|tu\s+nay)\s+ban\s+la\b|\bhay\s+dong\s+vai\b|\bgia\s+vo\s+"
         r"(?:la|ban)\b|\bkhong\s+bi\s+gioi\s+han\b"),
        ("tool_call_shape", r"[\"'](?:tool_calls?|function_call|tool_use)[\"']|"
         r"\{\s*[\"'“][^\"'”\n]{1,40}[\"'”]\s*:|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
         r"\s*\(|\b\w+\s*\(\s*\w+\s*=|\b[a-z_]+\.[a-z_]+\s*\(|<\s*/?\s*(?:tool|function|invoke|"
         r"call|parameter|tool_use|function_calls|antml:[a-z_]+)\b|\b(?:call|use|invoke|run|"
         r"execute|trigger)\s+(?:the\s+)?[\w-]*\s*(?:tool|function)\b"),
    ]
)

_B64_RUN = re.compile(r"(?:[A-Za-z0-9+/]{4,}={0,2}(?:[\s.,|:;_-]{1,3}|$)){2,}")
_B64_TOKEN = re.compile(r"[A-Za-z0-9+/]{4,}={0,2}")


_SPACED = re.compile(r"\b(?:\w ){4,}\w\b")


def match_rules(folded: Folded) -> Iterator[tuple[str, str]]:
    """``(rule name, original span)`` for each rule that matches, first match only."""
    seen = set()
    # "i g n o r e  p r e v i o u s": letter-spaced words are read joined as well.
    joined = _SPACED.sub(lambda m: m.group().replace(" ", ""), folded.text)
    for name, pattern in RULES:
        if name in seen:
            continue
        found = pattern.search(folded.text)
        if found:
            seen.add(name)
            yield name, folded.span(found.start(), found.end()) or found.group()
            continue
        found = pattern.search(joined) if joined != folded.text else None
        if found:
            seen.add(name)
            yield name, found.group()
    payload = encoded_payload(folded.source)
    if payload:
        yield "encoded_payload", payload


def encoded_payload(text: str) -> str | None:
    """The first base64 run, chunks joined, that decodes to readable text; None if none.

    Readable means: valid UTF-8, at least 8 characters, nearly all printable, with a space.
    Ordinary words joined together decode to binary noise, so prose does not trip it.
    """
    for run in _B64_RUN.finditer(strip_format(text)):
        tokens = _B64_TOKEN.findall(run.group())
        for start in range(len(tokens)):
            joined = "".join(tokens[start:])
            if len(joined) < 12:
                break
            decoded = _decode(joined)
            if decoded:
                return run.group().strip()
    return None


def _decode(joined: str) -> str | None:
    body = joined.rstrip("=")
    body = body[: len(body) - len(body) % 4] if len(body) % 4 == 1 else body
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    printable = sum(ch.isprintable() for ch in text)
    if len(text) >= 8 and " " in text.strip() and printable >= 0.95 * len(text):
        return text
    return None
