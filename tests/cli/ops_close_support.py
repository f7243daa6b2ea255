"""For the tests of `tollgate ops close`: its options as an operator with a token."""

from __future__ import annotations

from tests.cli.helpers import ops_token
from tollgate.config.settings import Settings

REASON = "terminated by hand in incident 12"


def closing(s: Settings, role: str = "on_call", *, tenant: str = "acme",
            name: str = "lan.ops", reason: str = REASON) -> tuple[str, ...]:
    """``ops close``'s options, as ``name`` holding a token of ``role`` and ``tenant``: who
    closes is the token's reviewer (there is no ``--operator``)."""
    return ("--reason", reason, *ops_token(s, role, tenant=tenant, name=name))
