"""How the embedded stack starts: ports from the environment, one-line errors, --reset, and a
state folder at any depth (issue 9 items 7 and B, issue 18 items 2 and 3)."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from tests.pg_folder import answer_in_a_process
from tests.stack.devproc import stack_folder
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports, StackError

#: Stand-ins only: with both addresses given, no Temporal or PostgreSQL is started.
OUTSIDE = {"database_url": "postgresql://unused/", "temporal_address": "127.0.0.1:1"}


def test_ports_come_from_the_environment() -> None:
    ports = Ports.from_env({"TOLLGATE_TEMPORAL_PORT": "17233", "TOLLGATE_CRM_PORT": " 0 ",
                            "TOLLGATE_UI_PORT": ""})
    assert ports == Ports(temporal=17233, ui=8233, crm=0, messaging=8302)


@pytest.mark.parametrize("raw", ["80a", "70000", "-1"])
def test_a_bad_port_variable_is_one_clear_line(raw: str) -> None:
    with pytest.raises(StackError) as info:
        Ports.from_env({"TOLLGATE_MESSAGING_PORT": raw})
    assert str(info.value) == f"TOLLGATE_MESSAGING_PORT={raw!r} is not a port number (0-65535)"


def test_a_taken_stand_in_port_is_named_with_its_variable(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        stack = DevStack(tmp_path, ports=Ports(crm=port, messaging=0), **OUTSIDE)
        with pytest.raises(StackError) as info:
            stack.start()
    assert f"port {port}" in str(info.value) and "TOLLGATE_CRM_PORT" in str(info.value)
    assert not (tmp_path / "stack.pid").exists()  # nothing left claiming the folder


def test_customers_and_messages_stay_until_reset(tmp_path: Path) -> None:
    (tmp_path / "stack.pid").write_text("999999999 1\n")  # an owner that died long ago
    stack = DevStack(tmp_path, ports=Ports(crm=0, messaging=0), **OUTSIDE).start()
    assert stack.standins is not None
    crm, messaging = stack.standins.crm_url, stack.standins.messaging_url
    httpx.put(f"{crm}/tenants/acme/customers/C-9", json={"first_name": "Hoa",
                                                         "consent_messaging": True})
    httpx.post(f"{messaging}/messages", headers={"Idempotency-Key": "k-1"}, json={
        "tenant_id": "acme", "recipient_ref": "C-9", "channel": "sms", "body": "hi",
        "correlation_id": "c-1"})
    keys = (tmp_path / "tenants.json").read_text()
    stack.stop()

    kept = DevStack(tmp_path, ports=Ports(crm=0, messaging=0), **OUTSIDE).start()
    assert kept.standins is not None
    assert kept.standins.crm.get("acme", "C-9") is not None
    assert kept.standins.messaging.get_by_key("k-1") is not None
    kept.stop()

    reset = DevStack(tmp_path, ports=Ports(crm=0, messaging=0), reset=True, **OUTSIDE).start()
    assert reset.standins is not None
    assert reset.standins.crm.get("acme", "C-9") is None
    assert reset.standins.crm.get("acme", "C-1001") is not None  # demo customers come back
    assert reset.standins.messaging.message_count == 0
    reset.stop()
    assert (tmp_path / "tenants.json").read_text() == keys  # producers keep their keys


def test_postgresql_starts_in_a_state_folder_of_any_depth() -> None:
    with stack_folder() as state_dir:
        deep = state_dir.joinpath(*["a-rather-long-folder-name"] * 5) / "pgdata"
        assert len(str(deep / ".s.PGSQL.5432")) > 108  # too long for a unix socket here
        done = answer_in_a_process(deep)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "42"
        assert not (deep / "postmaster.pid").exists()  # and it stopped
