"""The one way to build a Temporal client: worker, starter, CLI, bench, demo and tests use it,
so every payload they send is encrypted (see ``tollgate/codec/payload.py`` and docs/security.md).

Where the client connects comes from temporalio's environment configuration (a TOML profile
file plus ``TEMPORAL_*`` variables: address, namespace, TLS client certificates, API key), so
Temporal Cloud or a self-hosted cluster with mTLS is a matter of configuration (docs/deploy.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from temporalio.client import Client
from temporalio.envconfig import ClientConfigProfile, ClientConnectConfig
from temporalio.runtime import Runtime

from tollgate.codec.keyring import KeyRing, load_key_ring
from tollgate.codec.payload import encrypted_data_converter
from tollgate.config.service import CodecSettings
from tollgate.config.settings import process_env
from tollgate.config.temporal import TemporalSettings
from tollgate.config.worker import ObservabilitySettings
from tollgate.observability.sdk_runtime import sdk_runtime

#: The address Settings falls back to; an address from a profile file beats it (see below).
_DEFAULT_ADDRESS = "127.0.0.1:7233"
_DEFAULT_NAMESPACE = "default"


def connect_config(address: str, namespace: str = _DEFAULT_NAMESPACE, *,
                   env: Mapping[str, str] | None = None) -> ClientConnectConfig:
    """The keyword arguments for ``Client.connect``, without the data converter.

    The profile is ``TEMPORAL_PROFILE`` (default ``default``) of the file ``TEMPORAL_CONFIG_FILE``
    (default: temporalio's per-user path), with ``TEMPORAL_*`` variables over it. ``address``
    and ``namespace`` are what the caller's Settings resolved; they win, except that the
    built-in defaults give way to a profile that names its own, so a profile file alone is
    enough to reach Temporal Cloud.

    Raises:
        SystemExit: one line, when the named file is missing or unreadable, the profile is not
            in it, or a TLS file does not exist (the shell's convention for bad configuration).
    """
    # The whole mapping goes to temporalio, which reads its own TEMPORAL_* variables from it.
    source = process_env() if env is None else dict(env)
    temporal = TemporalSettings.from_env(source)
    named = temporal.config_file
    if named and not os.path.isfile(named):
        # temporalio skips a missing file silently; a named one that is absent is a typo.
        raise SystemExit(f"TEMPORAL_CONFIG_FILE: no such file: {named}")
    try:
        profile = ClientConfigProfile.load(profile=temporal.profile,
                                           override_env_vars=source)
        config = profile.to_client_connect_config()
    except (OSError, RuntimeError, ValueError) as exc:
        # Names a file or a key, never a value: the profile may hold an API key.
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SystemExit(f"Temporal client configuration: {first}") from None
    if address != _DEFAULT_ADDRESS or "target_host" not in config:
        config["target_host"] = address
    if namespace != _DEFAULT_NAMESPACE or "namespace" not in config:
        config["namespace"] = namespace
    return config


async def build_client(address: str, namespace: str = _DEFAULT_NAMESPACE, *,
                       keys: KeyRing | None = None,
                       env: Mapping[str, str] | None = None,
                       runtime: Runtime | None = None) -> Client:
    """Connect with the encrypting data converter.

    Args:
        address: ``host:port`` of the frontend (Settings' ``TEMPORAL_ADDRESS``).
        namespace: the namespace (Settings' ``TEMPORAL_NAMESPACE``).
        keys: the key ring; read from ``env`` (default: the process environment) when omitted.
        env: where ``TOLLGATE_KEYS``/``TOLLGATE_KEYS_FILE``/``TOLLGATE_STATE_DIR`` and the
            ``TEMPORAL_*`` client configuration are read.
        runtime: the Temporal runtime (one exporting the SDK's metrics,
            ``tollgate.observability.sdk_runtime``); when omitted, one for
            ``TOLLGATE_SDK_LOG_LEVEL`` with no exporter (a second client of the process, the
            HTTP relay's, must not bind the SDK metrics port again: that stopped ``tollgate dev``
            at its first webhook).
    """
    from tollgate.observability import tracing

    source = process_env() if env is None else dict(env)
    ring = keys or load_key_ring(CodecSettings.from_env(source))
    config: dict[str, Any] = dict(connect_config(address, namespace, env=source))
    target = config.pop("target_host")
    # Tracing is on only with OTEL_EXPORTER_OTLP_ENDPOINT (docs/tracing.md): then the client,
    # and every worker built from it, carries the trace through Temporal.
    observability = ObservabilitySettings.from_env(source)
    tracing.configure(observability)
    # Never the SDK's default runtime: it prints the core's lines on stdout (sdk_runtime).
    return await Client.connect(target, **config, data_converter=encrypted_data_converter(ring),
                                interceptors=tracing.interceptors(),
                                runtime=runtime or sdk_runtime(observability.model_copy(
                                    update={"sdk_metrics_port": None})))
