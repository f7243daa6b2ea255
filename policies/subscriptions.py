"""Who consumes which event type: a versioned file per release in ``policies/subscriptions/``
(docs/fan-out.md). Adding a consumer is a new file (or a new entry), never a producer change.

Loaded by the producer side at publish time (never at import, never in a workflow); the
snapshot travels in the fan-out workflow's input, so a replay sees the same consumers.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from contracts.errors import InvalidInput
from contracts.fanout import Subscription, SubscriptionSet


def newest_subscriptions_file() -> Path:
    folder = resources.files("policies") / "subscriptions"
    names = sorted(f.name for f in folder.iterdir() if f.name.endswith(".json"))
    if not names:
        raise InvalidInput("subscriptions_missing", "no subscription file in policies/")
    return Path(str(folder / names[-1]))


def load_subscriptions(path: Path | None = None) -> SubscriptionSet:
    """Read and validate one subscription file (the newest when ``path`` is None).

    Raises:
        InvalidInput: unreadable, not JSON, not the schema (first problem named), a consumer
            listed twice, or a ``version`` that is not the file's name.
    """
    path = newest_subscriptions_file() if path is None else path
    try:
        subs = SubscriptionSet.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        where = f"{'.'.join(map(str, first['loc']))}: {first['msg']}" if first else type(
            exc).__name__
        raise InvalidInput("subscriptions_invalid", f"{path.name}: {where}") from None
    if subs.version != path.stem:
        raise InvalidInput("subscriptions_version", f"{path.name} says version {subs.version}")
    names = [s.consumer for s in subs.subscriptions]
    if len(set(names)) != len(names):
        raise InvalidInput("subscriptions_duplicate", f"{path.name}: a consumer is listed twice")
    return subs


def consumers_for(subs: SubscriptionSet, event_type: str) -> list[Subscription]:
    """The subscriptions of ``event_type``, in file order (the order children are started)."""
    return [s for s in subs.subscriptions if event_type in s.event_types]


#: An idempotency key's longest form (``contracts.base.ID_BODY``).
_KEY_CHARS = 128


def control_core_key(event_id: str, consumer: str) -> str:
    """The business key of a consumer's child ProcessEvent: ``{event_id}.{consumer}``, the
    idempotency key and event id of the event it hands the control core (so its workflow id is
    ``event/{tenant}/{event_id}.{consumer}`` and its action key derives from both). Never a run
    id: a redelivery, a replay or a second fan-out of the same event finds the same child.

    Both parts are identifiers already; a pair too long for one keeps the consumer whole and
    replaces the event id's tail by a digest of the whole id, so two long ids never collide."""
    key = f"{event_id}.{consumer}"
    if len(key) <= _KEY_CHARS:
        return key
    digest = hashlib.sha256(event_id.encode()).hexdigest()[:16]
    head = event_id[:max(1, _KEY_CHARS - len(consumer) - len(digest) - 2)]
    return f"{head}.{digest}.{consumer}"[:_KEY_CHARS]
