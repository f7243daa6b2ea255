"""Where reviewer notices go: a Slack-compatible incoming webhook, e-mail through SMTP, or a
local sink (a JSON-lines file) that the embedded default and the tests read: the
implementations of ``adapters.ports.notify.NoticeChannel``.

A channel raises ``NoticeNotSent`` when the notice surely did not leave (connection refused,
4xx), so it may be tried again, and ``NoticeUnknown`` when it may have been delivered (timeout,
5xx after the request left), so it is never repeated.
"""

from __future__ import annotations

import asyncio
import json
import os
import smtplib
from collections.abc import Callable, Mapping
from email.message import EmailMessage
from pathlib import Path

import httpx

from adapters.ports.notify import NoticeNotSent, NoticeUnknown


class SlackWebhook:
    """Slack (and Mattermost, Rocket.Chat, Teams' Slack-compatible hooks): ``{"text": ...}``."""

    name = "slack_webhook"

    def __init__(self, url: str, client: httpx.AsyncClient,
                 sign: Callable[[bytes], Mapping[str, str]] | None = None) -> None:
        # ``sign``: the Standard Webhooks headers for the exact body (the shell holds the key).
        self._url, self._client, self._sign = url, client, sign

    async def send(self, text: str) -> None:
        body = json.dumps({"text": text}, ensure_ascii=False).encode()
        headers = {"content-type": "application/json", **(self._sign(body) if self._sign else {})}
        try:
            answer = await self._client.post(self._url, content=body, headers=headers,
                                             timeout=10)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise NoticeNotSent(type(exc).__name__) from None
        except httpx.HTTPError as exc:
            raise NoticeUnknown(type(exc).__name__) from None
        if answer.status_code >= 500:
            raise NoticeUnknown(f"HTTP {answer.status_code}")
        if answer.status_code >= 400:
            raise NoticeNotSent(f"HTTP {answer.status_code}")


class LocalSink:
    """Appends one JSON line per notice: the embedded default's stand-in for a chat channel.
    The file is 0600, whatever the umask: a notice names a tenant, an event type and its review."""

    name = "local_sink"

    def __init__(self, path: Path) -> None:
        self.path = path

    async def send(self, text: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.fchmod(fd, 0o600)  # a file an earlier version made at the umask's mode
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")

    def read(self) -> list[str]:
        if not self.path.exists():
            return []
        return [json.loads(line)["text"] for line in self.path.read_text().splitlines()]


class SmtpEmail:
    """E-mail through an SMTP server (STARTTLS when asked); the subject is the notice's first
    words, the body the notice. smtplib blocks, so the send runs in a thread."""

    name = "email"

    def __init__(self, host: str, port: int, sender: str, recipients: list[str], *,
                 starttls: bool = False, username: str | None = None,
                 password: str | None = None) -> None:
        self.host, self.port, self.sender, self.recipients = host, port, sender, recipients
        self.starttls, self._username, self._password = starttls, username, password

    async def send(self, text: str) -> None:
        await asyncio.to_thread(self._send, text)

    def _send(self, text: str) -> None:
        message = EmailMessage()
        message["From"], message["To"] = self.sender, ", ".join(self.recipients)
        message["Subject"] = text.split(" · ")[0]
        message.set_content(text)
        try:
            smtp = smtplib.SMTP(self.host, self.port, timeout=15)
        except OSError as exc:  # nothing was said to the server yet
            raise NoticeNotSent(type(exc).__name__) from None
        with smtp:
            try:
                if self.starttls:
                    smtp.starttls()
                if self._username and self._password:
                    smtp.login(self._username, self._password)
                smtp.send_message(message)
            except smtplib.SMTPResponseException as exc:  # the server refused it: not queued
                raise NoticeNotSent(f"SMTP {exc.smtp_code}") from None
            except smtplib.SMTPRecipientsRefused:
                raise NoticeNotSent("recipients refused") from None
            except OSError as exc:  # cut off mid-conversation: it may have been queued
                raise NoticeUnknown(type(exc).__name__) from None
