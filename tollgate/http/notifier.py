"""Tell reviewers: when a review opens, when its SLA passes and when it expires, one notice per
review, draft version and step, to the tenant's channel, with a link to the inbox.

The notice names the event type, the workflow id and the tenant, never the payload or the draft
(no personal data in a chat channel). Channels per tenant come from ``TOLLGATE_NOTIFY_FILE``
(default ``$TOLLGATE_STATE_DIR/notify.json``: ``{"acme": {"slack_webhook": "https://..."}}``);
a tenant without one gets the local sink ``$TOLLGATE_STATE_DIR/notices.jsonl``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path

import httpx
import structlog

from adapters.broker.cancel import raise_if_cancel_pending, raise_if_cancelled
from adapters.notify.channels import LocalSink
from adapters.ports.notify import NoticeChannel, NoticeNotSent, NoticeUnknown
from adapters.postgres.notices import DueNotice, NoticeStore
from tollgate.config.settings import named_secret

log = structlog.get_logger("tollgate.notify")
_SAYS = {"opened": "review waiting", "sla": "review past its SLA", "expired": "review expired "
         "without a decision"}


#: Addresses that mean "every interface": a link to one reaches no reviewer.
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 - compared, never bound


def warn_if_reviewers_unreached(channels: Mapping[str, NoticeChannel], public_url: str | None,
                                host: str) -> None:
    """At ``tollgate serve``'s start: what ``tollgate dev`` gets by design, a deployment would
    get without a word (ADR 0086). No notify file: every notice goes to the local sink, a file
    in the process's state folder that no reviewer reads in a container. No public URL on a
    wildcard host: every notice links to ``http://0.0.0.0:PORT``."""
    if not channels:
        log.warning("reviewer_notices_local_only",
                    detail="no notify file (TOLLGATE_NOTIFY_FILE): reviewer notices are only "
                           "appended to notices.jsonl in the state folder (docs/api.md)")
    if public_url is None and host in WILDCARD_HOSTS:
        log.warning("reviewer_links_unreachable",
                    detail=f"TOLLGATE_PUBLIC_URL is not set and the service listens on {host!r}:"
                           " the inbox links in reviewer notices lead nowhere")


def notice_text(notice: DueNotice, inbox_url: str) -> str:
    due = (f" · SLA {notice.review_due_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
           if notice.review_due_at and notice.step != "expired" else "")
    return (f"Tollgate: {_SAYS[notice.step]} · {notice.event_type} · tenant {notice.tenant_id}"
            f"{due} · {inbox_url.rstrip('/')}/inbox/review/{notice.workflow_id}")


async def notify_once(store: NoticeStore, channels: Mapping[str, NoticeChannel],
                      fallback: NoticeChannel, inbox_url: str,
                      now: datetime | None = None) -> int:
    """Send every notice that is due now; returns how many were sent."""
    sent = 0
    for notice in await store.due(now or datetime.now(UTC)):
        channel = channels.get(notice.tenant_id, fallback)
        if not await store.claim(notice, channel.name):
            continue
        try:
            await channel.send(notice_text(notice, inbox_url))
        except NoticeNotSent as exc:
            await store.settle(notice.notice_key, "FAILED", str(exc))
            continue
        except NoticeUnknown as exc:
            await store.settle(notice.notice_key, "UNKNOWN", str(exc))
            log.warning("notice_outcome_unknown", workflow_id=notice.workflow_id,
                        step=notice.step, error=str(exc))
            continue
        await store.settle(notice.notice_key, "SENT")
        sent += 1
    return sent


def load_channels(path: Path, client: httpx.AsyncClient,
                  tenant_secrets: Mapping[str, str] | None = None) -> dict[str, NoticeChannel]:
    """Tenant -> channel from the notify file (none: every tenant gets the local sink). A
    webhook channel signs its posts the Standard Webhooks way with the tenant's key."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError:
        raise SystemExit("the notify file is not JSON") from None
    channels: dict[str, NoticeChannel] = {}
    for tenant, spec in (data.items() if isinstance(data, dict) else []):
        channels[tenant] = _channel(tenant, spec, client,
                                    (tenant_secrets or {}).get(tenant))
    return channels


def _channel(tenant: str, spec: object, client: httpx.AsyncClient,
             secret: str | None = None) -> NoticeChannel:
    from adapters.notify.channels import SlackWebhook, SmtpEmail

    spec = spec if isinstance(spec, dict) else {}
    url, mail = spec.get("slack_webhook"), spec.get("email")
    if isinstance(url, str) and url.startswith(("https://", "http://")):
        return SlackWebhook(url, client, notice_signer(secret) if secret else None)
    if isinstance(mail, dict) and isinstance(mail.get("host"), str) and mail.get("to"):
        to = mail["to"] if isinstance(mail["to"], list) else [mail["to"]]
        password_env = mail.get("password_env")  # the secret itself never sits in the file
        port = mail.get("port", 587)
        if not isinstance(port, int):
            raise SystemExit(f"notify file: tenant {tenant!r}: email port must be a number")
        return SmtpEmail(mail["host"], port,
                         str(mail.get("from", "tollgate@localhost")), [str(t) for t in to],
                         starttls=bool(mail.get("starttls", True)),
                         username=mail.get("username"),
                         password=named_secret(password_env) if password_env else None)
    raise SystemExit(f"notify file: tenant {tenant!r} needs a slack_webhook URL or an email "
                     "object with host and to")


def notice_signer(secret: str) -> Callable[[bytes], dict[str, str]]:
    """Standard Webhooks headers for a notice; its id is the body's hash, so a receiver sees
    a repeated notice as the same message."""
    from tollgate.http.webhook_auth import standard_headers

    return lambda body: standard_headers(secret, "notice_" + sha256(body).hexdigest()[:32],
                                         body)


async def run_notifier(store: NoticeStore, channels: Mapping[str, NoticeChannel],
                       fallback: LocalSink, inbox_url: str, every_s: float = 5.0) -> None:
    """Run until cancelled; a failing pass is logged and the next one tries again."""
    while True:
        raise_if_cancel_pending()  # a cancel a library swallowed (adapters/broker/cancel.py)
        try:
            await notify_once(store, channels, fallback, inbox_url)
        except Exception as exc:  # the loop must outlive a database blip
            raise_if_cancelled(exc)  # ... unless it is this loop's cancel in a library's guise
            log.warning("notify_pass_failed", error=type(exc).__name__)
        await asyncio.sleep(every_s)
