"""Is the codec server up? The Web UI decodes every payload through it and, when it cannot
reach it, shows a loading skeleton with no error (docs/runbook.md, "Codec server"): nothing
else tells an operator. ``tollgate ops status`` asks it once, briefly, with an empty batch."""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlsplit

import httpx

from tollgate.config.settings import Settings, read_endpoints

#: Long enough for a loaded codec server on another host, short enough for a status screen.
PROBE_TIMEOUT_S: Final = 2.0


def codec_url(s: Settings) -> str | None:
    """``TOLLGATE_CODEC_URL``, else the running ``tollgate dev``'s (endpoints.json)."""
    return s.codec.url or read_endpoints(s.state_dir).get("codec_url")


def _token(s: Settings) -> str | None:
    if s.codec.token is not None:
        return s.codec.token.get_secret_value()
    path = s.state_dir / "codec-token"  # tollgate dev writes it (0600) for this terminal
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


async def probe_codec(s: Settings) -> dict[str, Any]:
    """``{"url", "state", "detail"}``: state ``ok``, ``unreachable``, ``refused`` (the token this
    terminal holds was turned away), ``failing`` (any other answer) or ``not configured``. The
    URL is shown as scheme, host and port only: a UI endpoint carries the token in its path."""
    url = codec_url(s)
    if not url:
        return {"url": None, "state": "not configured", "detail": None}
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    shown = f"{parts.scheme}://{parts.hostname}{port}"  # never a user, password or path
    token = _token(s)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT_S) as http:
            answer = await http.post(url.rstrip("/") + "/decode", json={"payloads": []},
                                     headers=headers)
    except httpx.HTTPError as exc:
        return {"url": shown, "state": "unreachable", "detail": type(exc).__name__}
    if answer.status_code == 200:
        return {"url": shown, "state": "ok", "detail": None}
    if answer.status_code == 401:
        # Up; whether the UI's token is right this terminal cannot tell without one.
        return ({"url": shown, "state": "refused", "detail": "this terminal's token refused"}
                if token else {"url": shown, "state": "ok", "detail": "token not checked"})
    return {"url": shown, "state": "failing", "detail": f"HTTP {answer.status_code}"}
