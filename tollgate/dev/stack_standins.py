"""The stand-in targets as the embedded stack starts them: on the stack's ports, their records
under the state folder, a taken port or an unreadable store as a one-line ``StackError``, and
the demo customers only in a folder that has no records yet."""

from __future__ import annotations

from pathlib import Path

from tollgate.dev.stack_config import PORT_VARIABLES, Ports, StackError
from tollgate.dev.standins import PortInUseError, StandIns, StoreError, start_standins


def start_stack_standins(ports: Ports, data_dir: Path) -> StandIns:
    fresh = not (data_dir / "crm.sqlite3").exists()
    try:
        standins = start_standins(crm_port=ports.crm, messaging_port=ports.messaging,
                                  data_dir=data_dir)
    except PortInUseError as exc:
        variable = PORT_VARIABLES["crm" if exc.port == ports.crm else "messaging"]
        raise StackError(f"port {exc.port} (stand-in) is already in use on 127.0.0.1; stop "
                         f"what holds it or set {variable}") from None
    except StoreError as exc:
        raise StackError(f"{exc}; `tollgate dev --reset` starts empty") from None
    if fresh:  # a new state folder gets the demo customers; later starts keep what is there
        standins.crm.seed_demo()
    return standins
