"""The one way to build a Temporal client: worker, starter, CLI, bench, demo and tests use it,
so every payload they send is encrypted (see ``tollgate/codec.py`` and docs/security.md)."""

from __future__ import annotations

from collections.abc import Mapping

from temporalio.client import Client

from tollgate.codec import KeyRing, encrypted_data_converter, load_key_ring


async def build_client(address: str, namespace: str = "default", *,
                       keys: KeyRing | None = None,
                       env: Mapping[str, str] | None = None) -> Client:
    """Connect with the encrypting data converter.

    Args:
        keys: the key ring; read from ``env`` (default: the process environment) when omitted.
        env: where ``TOLLGATE_KEYS``/``TOLLGATE_KEYS_FILE``/``TOLLGATE_STATE_DIR`` are read.
    """
    import os

    from tollgate import tracing

    ring = keys or load_key_ring(env)
    # Tracing is on only with OTEL_EXPORTER_OTLP_ENDPOINT (docs/tracing.md): then the client,
    # and every worker built from it, carries the trace through Temporal.
    tracing.configure_from_env(os.environ if env is None else env)
    return await Client.connect(address, namespace=namespace,
                                data_converter=encrypted_data_converter(ring),
                                interceptors=tracing.interceptors())
