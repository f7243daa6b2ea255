"""Temporal client settings through temporalio's environment configuration (issue 13, item 4):
a profile file or ``TEMPORAL_*`` variables alone reach Temporal Cloud or an mTLS cluster, the
dev stack's explicit address still wins, and bad configuration is one line without secrets."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.service import TLSConfig

from tollgate.runtime.client import connect_config

CLOUD = "ns.acct.tmprl.cloud:7233"


def write_profiles(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "client.pem").write_text("CERT")
    (tmp_path / "client.key").write_text("KEY")
    (tmp_path / "ca.pem").write_text("CA")
    path = tmp_path / "temporal.toml"
    path.write_text(f"""
[profile.cloud]
address = "{CLOUD}"
namespace = "ns.acct"
api_key = "cloud-api-key"

[profile.mtls]
address = "temporal.internal:7233"
namespace = "tollgate"
[profile.mtls.tls]
client_cert_path = "{tmp_path / 'client.pem'}"
client_key_path = "{tmp_path / 'client.key'}"
server_ca_cert_path = "{tmp_path / 'ca.pem'}"
server_name = "temporal.internal"
""")
    return {"TEMPORAL_CONFIG_FILE": str(path)}


def test_nothing_configured_is_the_plain_local_connection() -> None:
    config = connect_config("127.0.0.1:7233", env={})
    assert config == {"target_host": "127.0.0.1:7233", "namespace": "default"}


def test_api_key_profile_reaches_temporal_cloud_with_tls(tmp_path: Path) -> None:
    env = {**write_profiles(tmp_path), "TEMPORAL_PROFILE": "cloud"}
    config = connect_config("127.0.0.1:7233", env=env)
    assert config["target_host"] == CLOUD
    assert config["namespace"] == "ns.acct"
    assert config["api_key"] == "cloud-api-key"
    assert config["tls"] is True


def test_mtls_profile_loads_the_certificate_files(tmp_path: Path) -> None:
    env = {**write_profiles(tmp_path), "TEMPORAL_PROFILE": "mtls"}
    config = connect_config("127.0.0.1:7233", env=env)
    tls = config["tls"]
    assert isinstance(tls, TLSConfig)
    assert (tls.client_cert, tls.client_private_key) == (b"CERT", b"KEY")
    assert tls.server_root_ca_cert == b"CA"
    assert tls.domain == "temporal.internal"
    assert config["target_host"] == "temporal.internal:7233"


def test_variables_override_the_profile(tmp_path: Path) -> None:
    env = {**write_profiles(tmp_path), "TEMPORAL_PROFILE": "cloud",
           "TEMPORAL_API_KEY": "rotated-key", "TEMPORAL_NAMESPACE": "other.acct"}
    config = connect_config("127.0.0.1:7233", "other.acct", env=env)
    assert config["api_key"] == "rotated-key"
    assert config["namespace"] == "other.acct"


def test_explicit_address_beats_the_profile(tmp_path: Path) -> None:
    # The dev stack passes the address it started; a developer's profile must not redirect it.
    env = {**write_profiles(tmp_path), "TEMPORAL_PROFILE": "cloud"}
    config = connect_config("127.0.0.1:40001", "default", env=env)
    assert config["target_host"] == "127.0.0.1:40001"


def test_api_key_from_variables_alone_turns_tls_on() -> None:
    config = connect_config("ns.acct.tmprl.cloud:7233", "ns.acct",
                            env={"TEMPORAL_API_KEY": "k"})
    assert config["tls"] is True and config["api_key"] == "k"


@pytest.mark.parametrize("env, says", [
    ({"TEMPORAL_CONFIG_FILE": "/nonexistent/temporal.toml"}, "no such file"),
    ({"TEMPORAL_PROFILE": "nope"}, "nope"),
    ({"TEMPORAL_PROFILE": "mtls", "TEMPORAL_TLS_CLIENT_CERT_PATH": "/nonexistent/c.pem"},
     "c.pem"),
])
def test_bad_configuration_is_one_line_without_the_key(tmp_path: Path, env: dict[str, str],
                                                       says: str) -> None:
    full = {**write_profiles(tmp_path), **env}
    with pytest.raises(SystemExit) as caught:
        connect_config("127.0.0.1:7233", env=full)
    message = str(caught.value.code)
    assert says in message and "\n" not in message
    assert "cloud-api-key" not in message
