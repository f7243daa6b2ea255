"""Local stand-in targets (a CRM, a messaging service and a helpdesk) that tests and the demo
reach over real HTTP on loopback. Starting binds three sockets and three threads: quick enough
to call from async code, and nothing happens at import time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from tollgate.dev.standins.crm import CrmStandIn
from tollgate.dev.standins.crm_record import CrmRecord
from tollgate.dev.standins.faults import Fault
from tollgate.dev.standins.helpdesk import HelpdeskStandIn
from tollgate.dev.standins.messaging import MessagingStandIn
from tollgate.dev.standins.runner import PortInUseError, StandInServer
from tollgate.dev.standins.server import StandIn
from tollgate.dev.standins.store import RecordStore, StoreError

__all__ = [
    "CrmRecord",
    "CrmStandIn",
    "Fault",
    "HelpdeskStandIn",
    "MessagingStandIn",
    "PortInUseError",
    "RecordStore",
    "StandIn",
    "StandInServer",
    "StandIns",
    "StoreError",
    "start_standins",
]


@dataclass
class StandIns:
    crm: CrmStandIn
    messaging: MessagingStandIn
    helpdesk: HelpdeskStandIn

    @property
    def crm_url(self) -> str:
        return self.crm.url

    @property
    def messaging_url(self) -> str:
        return self.messaging.url

    @property
    def helpdesk_url(self) -> str:
        return self.helpdesk.url

    def stop(self) -> None:
        self.helpdesk.stop()
        self.messaging.stop()
        self.crm.stop()

    def __enter__(self) -> StandIns:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def start_standins(host: str = "127.0.0.1", crm_port: int = 0, messaging_port: int = 0,
                   data_dir: Path | None = None, helpdesk_port: int = 0) -> StandIns:
    """Starts the three stand-ins (port 0: any free port). Raises ``PortInUseError`` naming the
    port, and leaves nothing running, when a port is taken.

    ``data_dir``: where they keep their records (``crm.sqlite3``, ``messaging.sqlite3``,
    ``helpdesk.sqlite3``), so a restart finds them again; None keeps them in memory.
    """
    def file(name: str) -> Path | None:
        return data_dir / f"{name}.sqlite3" if data_dir is not None else None

    crm = CrmStandIn(host=host, port=crm_port, path=file("crm")).start()
    try:
        messaging = MessagingStandIn(host=host, port=messaging_port,
                                     path=file("messaging")).start()
    except BaseException:
        crm.stop()
        raise
    try:
        helpdesk = HelpdeskStandIn(host=host, port=helpdesk_port,
                                   path=file("helpdesk")).start()
    except BaseException:
        messaging.stop()
        crm.stop()
        raise
    return StandIns(crm=crm, messaging=messaging, helpdesk=helpdesk)
