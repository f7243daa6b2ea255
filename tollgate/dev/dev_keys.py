"""The dev stack's own secrets, made once, random, 0600 under the state folder: the tenants'
HMAC keys and the key that signs action tokens (ADR 0027). A worker started by hand against a
running stack finds the token key at the same default path (``tollgate.runtime.token_key``)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from tollgate.codec.files import write_private
from tollgate.dev.stack_config import DEMO_TENANTS


def ensure_tenants_file(path: Path) -> None:
    """The dev stack's tenant keys: made once, random, kept under the state folder."""
    if not path.exists():
        write_private(path, json.dumps({t: secrets.token_hex(24) for t in DEMO_TENANTS}, indent=2))


def ensure_action_token_key(state_dir: Path) -> Path:
    """``state_dir/action-token.key``, made once: 64 hex characters, 0600 from the start."""
    path = state_dir / "action-token.key"
    if not path.exists():
        write_private(path, secrets.token_hex(32) + "\n")
    return path
