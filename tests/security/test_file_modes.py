"""Files that hold keys or customer data are the owner's alone: 0600, in 0700 folders, even
under a permissive umask (022 made them 0644 before). Under ``tollgate dev``'s state folder (0711,
so PostgreSQL's user passes through) that includes what Temporal, the logs and the notices
write, on a real start; and PostgreSQL, run by root as its own user, opens the folders above its
data for passing through only, not for listing."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path

import pytest

from adapters.notify.channels import LocalSink
from tests.pg_folder import answer_in_a_process
from tollgate.codec.files import private_dir
from tollgate.codec.keyring import ensure_keys_file
from tollgate.codec.server import start_dev_codec_server
from tollgate.dev.dev_keys import ensure_tenants_file
from tollgate.dev.run import start_extra_workers
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports, free_port
from tollgate.dev.standins.store import RecordStore
from tollgate.ops.backup import backup
from tollgate.runtime.identity import DEV_KEY_FILE, dev_private_key

ROOT = Path(__file__).resolve().parents[2]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_the_stand_ins_records_are_owner_only(tmp_path: Path) -> None:
    folder = tmp_path / "state" / "standins"
    store = RecordStore(folder / "crm.sqlite3")
    store.put("C-1", {"name": "Ana"})
    store.close()
    assert mode(folder) == 0o700
    files = sorted(folder.iterdir())
    assert [f.name for f in files][:1] == ["crm.sqlite3"]
    assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}


def test_an_existing_open_stand_in_folder_is_narrowed(tmp_path: Path) -> None:
    folder = tmp_path / "standins"
    folder.mkdir(mode=0o755)
    (folder / "crm.sqlite3").touch(mode=0o644)
    RecordStore(folder / "crm.sqlite3").put("C-1", {"name": "Ana"})
    assert (mode(folder), mode(folder / "crm.sqlite3")) == (0o700, 0o600)


def test_the_dev_stacks_secrets_are_owner_only(tmp_path: Path) -> None:
    state = tmp_path / "state"
    ensure_tenants_file(state / "tenants.json")
    ensure_keys_file(state / "keys.json")
    server = start_dev_codec_server({"TOLLGATE_KEYS_FILE": str(state / "keys.json")}, state,
                                    ui_port=8233)
    server.stop()
    assert mode(state) == 0o700
    assert {name: mode(state / name) for name in ("tenants.json", "keys.json", "codec-token")} \
        == dict.fromkeys(("tenants.json", "keys.json", "codec-token"), 0o600)


def test_the_web_ui_gets_the_codec_token_only_when_asked(tmp_path: Path) -> None:
    state = tmp_path / "state"
    server = start_dev_codec_server({"TOLLGATE_KEYS_FILE": str(state / "keys.json")}, state,
                                    ui_port=8233)
    try:
        plain = DevStack(state_dir=state, ports=Ports(), codec=server)
        asked = DevStack(state_dir=state, ports=Ports(), codec=server, ui_codec_token=True)
        assert not any(server.token in arg for arg in plain.temporal_args())
        assert asked.temporal_args()[-2:] == ["--ui-codec-endpoint", server.ui_endpoint]
    finally:
        server.stop()


def test_a_backup_dump_is_owner_only(tmp_path: Path, database_url: str) -> None:
    dump = tmp_path / "backups" / "tollgate.dump"
    backup(database_url, dump)
    assert dump.stat().st_size > 0
    assert (mode(dump.parent), mode(dump)) == (0o700, 0o600)


def test_the_dev_signing_key_is_never_readable_by_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # With every later narrowing undone, the mode the key was created with is what stays: it
    # must be 0600 from the start (written at 0644 and narrowed after, others could read it).
    monkeypatch.setattr(Path, "chmod", lambda *_args, **_kwargs: None)
    dev_private_key(tmp_path)
    assert mode(tmp_path / DEV_KEY_FILE) == 0o600


#: What a dev stack's Temporal server and its workers write under the state folder.
TEMPORAL_FILES = ("temporal.db", "temporal.db-wal", "temporal.db-shm", "temporal.log",
                  "workers.log")


async def test_temporal_and_the_workers_files_are_owner_only_on_a_real_start(
        tmp_path: Path, database_url: str) -> None:
    state = tmp_path / "state"

    async def start_and_look() -> dict[str, int]:
        stack = DevStack(state_dir=state, database_url=database_url, ports=Ports(
            temporal=free_port(), ui=free_port(), crm=0, messaging=0))
        await asyncio.to_thread(stack.start)
        try:
            async with AsyncExitStack() as exits:
                start_extra_workers(exits, stack, 0, timedelta(seconds=1))
                return {name: mode(state / name) for name in TEMPORAL_FILES}
        finally:
            await asyncio.to_thread(stack.stop)

    owner_only = dict.fromkeys(TEMPORAL_FILES, 0o600)
    assert await start_and_look() == owner_only
    assert mode(state) == 0o711  # others pass through: the files themselves keep them out
    # Files an earlier version left at the umask's mode are narrowed on the next start.
    for name in TEMPORAL_FILES:
        if (state / name).exists():
            (state / name).chmod(0o644)
    assert await start_and_look() == owner_only


async def test_the_local_notices_are_owner_only(tmp_path: Path) -> None:
    (tmp_path / "old.jsonl").touch(mode=0o644)
    for name in ("notices.jsonl", "old.jsonl"):
        await LocalSink(tmp_path / name).send("Tollgate: review waiting · tenant acme")
    assert LocalSink(tmp_path / "old.jsonl").read() == ["Tollgate: review waiting · tenant acme"]
    assert (mode(tmp_path / "notices.jsonl"), mode(tmp_path / "old.jsonl")) == (0o600, 0o600)


@pytest.mark.skipif(os.geteuid() != 0, reason="PostgreSQL has a user of its own under root only")
def test_postgresql_under_root_opens_the_folders_above_its_data_for_passing_through_only() -> None:
    # A state folder as `tollgate dev` makes it, inside a folder only root may enter (as /root).
    outer = Path(tempfile.mkdtemp(prefix="tollgate-prefix-"))
    try:
        pgdata = private_dir(outer / "state", mode=0o711) / "pgdata"
        before = {folder: mode(folder) for folder in pgdata.parents}
        done = answer_in_a_process(pgdata, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "42"  # it started, from behind a 0700 folder
        assert not (pgdata / "postmaster.pid").exists()  # and it stopped
        gained = {str(folder): oct(mode(folder) & ~was) for folder, was in before.items()
                  if mode(folder) & ~was & ~0o111}
        assert gained == {}  # execute (passing through) at most: no one else lists them
        assert (mode(outer), mode(outer / "state")) == (0o711, 0o711)
    finally:
        shutil.rmtree(outer, ignore_errors=True)
