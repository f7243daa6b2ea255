"""The notice port: where a reviewer notice goes (a chat webhook, e-mail, a local sink).

Implementations: ``adapters/notify/channels.py``; ``tollgate/http/notifier.py`` sends through
them. The two exceptions are the port's contract, so a caller can decide whether to try again
without knowing which channel it holds.
"""

from __future__ import annotations

from typing import Protocol


class NoticeNotSent(Exception):
    """The notice surely did not leave (connection refused, 4xx): it may be tried again."""


class NoticeUnknown(Exception):
    """The notice may have been delivered (timeout, 5xx after the request left): it is never
    repeated."""


class NoticeChannel(Protocol):
    name: str

    async def send(self, text: str) -> None: ...
