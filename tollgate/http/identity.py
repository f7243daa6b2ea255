"""Reviewer identity from OIDC access tokens, for the HTTP service: roles and tenant come from
the token, never from the request. The verification itself is ``tollgate.runtime.identity``,
shared with the CLI and the workers' update validator (ADR 0026)."""

from tollgate.runtime.identity import (
    DEV_AUDIENCE,
    DEV_ISSUER,
    DEV_KEY_FILE,
    Identity,
    IdentityError,
    Verifier,
    dev_private_key,
    issue_dev_token,
    verifier_from_settings,
)

__all__ = ["DEV_AUDIENCE", "DEV_ISSUER", "DEV_KEY_FILE", "Identity", "IdentityError", "Verifier",
           "dev_private_key", "issue_dev_token", "verifier_from_settings"]
