"""The stand-in CRM, messaging and helpdesk targets as a long-running process, for the compose
demo only (a real deployment points TOLLGATE_CRM_URL, TOLLGATE_MESSAGING_URL and
TOLLGATE_HELPDESK_URL at the real systems).

The entry point of the `standins` image (deploy/Dockerfile), which copies the stand-ins' source
beside this file: they are a tool, not in the wheel (ADR 0023). Their records live in the
image's home folder.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

from tollgate.dev.standins import start_standins

DATA = Path("/var/lib/tollgate")

if __name__ == "__main__":
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with start_standins("0.0.0.0", 8401, 8402, data_dir=DATA,  # noqa: S104
                        helpdesk_port=8403) as standins:
        standins.crm.seed_demo()
        print("stand-ins: CRM :8401, messaging :8402, helpdesk :8403", flush=True)
        stop.wait()
