"""The stand-in CRM and messaging targets as a long-running process, for the compose demo only
(a real deployment points TOLLGATE_CRM_URL and TOLLGATE_MESSAGING_URL at the real systems)."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from tollgate.dev.standins import start_standins

if __name__ == "__main__":
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    data = Path(os.environ.get("TOLLGATE_STATE_DIR", "/var/lib/tollgate"))
    with start_standins("0.0.0.0", 8401, 8402, data_dir=data) as standins:  # noqa: S104
        standins.crm.seed_demo()
        print("stand-ins: CRM :8401, messaging :8402", flush=True)
        stop.wait()
