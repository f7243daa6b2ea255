"""The fault rig (real dev server, PostgreSQL, stand-ins) for the deployment tests, against a
messaging target that stores every POST as a new message: a second send shows; and the wheel,
installed outside the checkout."""

from collections.abc import Iterator

import pytest

from tests.deploy.wheel import Installed, install
from tests.faults.conftest import lookup_window_s, rig, rig_env
from tollgate.dev.standins import StandIns

__all__ = ["installed", "lookup_window_s", "rig", "rig_env", "target_mode"]
#: What worker processes in these tests declare about the target (tollgate/config/targets.py).
NO_DEDUPE_TARGETS = '{"messaging": {"lookup": true, "dedupe": false}}'


@pytest.fixture
def target_mode(standins: StandIns) -> Iterator[str]:
    standins.messaging.dedupe = False
    yield "no_dedupe"
    standins.messaging.dedupe = True


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel built once per session and installed into a folder outside the checkout."""
    return install(tmp_path_factory.mktemp("wheel"))
