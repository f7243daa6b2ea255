"""The key that signs action tokens (ADR 0027), for the worker that mints and checks them.

``TOLLGATE_ACTION_TOKEN_KEY`` beats the file (``TOLLGATE_ACTION_TOKEN_KEY_FILE``, unset:
``$TOLLGATE_STATE_DIR/action-token.key``, which ``tollgate dev`` writes). Without a key a worker
does not start: a worker that could not check tokens would have to send unchecked, and one that
made its own would refuse every token its peers mint.
"""

from __future__ import annotations

from tollgate.config.settings import Settings

#: Too short to sign with; the same bound as the variable's.
MIN_KEY_CHARS = 32


def action_token_key(settings: Settings) -> bytes:
    """The key's bytes.

    Raises:
        SystemExit: one line naming where the key was looked for (never the key).
    """
    worker = settings.worker
    if worker.action_token_key is not None:
        return worker.action_token_key.get_secret_value().strip().encode()
    path = worker.action_token_key_file or settings.state_dir / "action-token.key"
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        raise SystemExit(f"action token key not found: set TOLLGATE_ACTION_TOKEN_KEY or "
                         f"TOLLGATE_ACTION_TOKEN_KEY_FILE (looked in {path})") from None
    if len(text) < MIN_KEY_CHARS:
        raise SystemExit(f"{path}: the action token key must be {MIN_KEY_CHARS} or more "
                         "characters")
    return text.encode()
