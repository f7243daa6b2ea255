"""Who a verified token says its holder is: what the review validator and the role checks read.

The token itself never travels in these types; the verifier (``tollgate/runtime/identity.py``)
turns a token into a ``VerifiedIdentity`` or refuses it with a code that is safe to show.
"""

from __future__ import annotations

from contracts.base import Frozen


class VerifiedIdentity(Frozen):
    """The claims of a token whose signature, issuer, audience and expiry were checked."""

    #: The token's ``sub``: stable, what the audit records beside the display name.
    subject: str
    #: Who decides, as shown and recorded: ``preferred_username``, else ``sub``.
    reviewer: str
    roles: tuple[str, ...]
    tenant: str
    #: A service or shared account (client-credentials token, or a ``service``/``shared``
    #: role): it may run automation, never decide a review.
    service: bool = False


class IdentityRefused(Exception):
    """A token that proves nothing. ``code`` is safe to show; the token never is."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message
