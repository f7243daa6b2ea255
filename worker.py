"""Run a Tollgate worker: ``python worker.py`` (main queue and the draft queue) or
``python worker.py --queue draft`` for a model-only worker that holds no database URL and no
adapter credentials, only the model key. The assembly lives in ``tollgate.runtime.workers``; health
endpoints and the drain on SIGTERM in ``tollgate.runtime.health``."""

from __future__ import annotations

import argparse
import sys

if __name__ == "__main__":
    # As starter.py: the wrong Python is one line and exit 7, never an import traceback.
    from tollgate.runtime.interpreter import require_installed

    require_installed(__file__, sys.argv[1:])

from tollgate.config.settings import Settings
from tollgate.observability.logs import configure_logging
from tollgate.runtime.entry import run_main
from tollgate.runtime.health import run_worker

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queue", choices=["all", "main", "draft"], default="all",
                        help="which queues this process serves (default: %(default)s)")
    args = parser.parse_args(argv)
    configure_logging()
    run_main(run_worker(args.queue, Settings.from_env()))


if __name__ == "__main__":
    main()
