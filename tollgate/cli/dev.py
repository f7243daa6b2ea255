"""`tollgate dev` and `tollgate demo`: the embedded stack, kept up or played through once."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tollgate.cli.common import Command, settings
from tollgate.cli.params import EdgePath
from tollgate.runtime.exits import Exit

if TYPE_CHECKING:
    from tollgate.config.settings import Settings


def _port(name: str, what: str) -> click.Option:
    return click.Option([f"--{name}-port", name], type=click.IntRange(1, 65535),
                        help=f"port of {what} (default: the environment's, else the standard one)")


@click.group(invoke_without_command=True,
             params=[_port("temporal", "the Temporal frontend"), _port("ui", "the Web UI"),
                       _port("crm", "the stand-in CRM"),
                       _port("messaging", "the stand-in messaging service"),
                       _port("http", "the HTTP service (webhook intake, review API, inbox)")])
@click.option("--reset", is_flag=True,
              help="start empty: delete the stack's data in the state folder first "
                   "(the tenant keys stay)")
@click.option("--workers", type=click.IntRange(1, 32), default=1, metavar="N",
              help="run N main workers: this process and N-1 `python worker.py --queue main` "
                   "processes (scale-out on one machine, docs/deploy.md)")
@click.option("--ui-codec-token", is_flag=True,
              help="give the Web UI the codec server's token, so it shows payloads decoded "
                   "(the UI's settings page then shows the token too)")
@click.pass_context
def dev(ctx: click.Context, temporal: int | None, ui: int | None, crm: int | None,
        messaging: int | None, http: int | None, reset: bool, workers: int,
        ui_codec_token: bool) -> Command | None:
    """Start the embedded stack (Temporal dev server, PostgreSQL, stand-in targets) and a
    worker, until Ctrl-C. A running stack writes .tollgate/endpoints.json, so commands in
    another terminal find it. `tollgate dev token` prints a local reviewer token."""
    if ctx.invoked_subcommand is not None:  # `dev token`: none of the stack's modules
        return None
    from tollgate.dev.stack import DevStack
    from tollgate.dev.stack_config import Ports

    chosen = {k: v for k, v in {"temporal": temporal, "ui": ui, "crm": crm,
                                "messaging": messaging, "http": http}.items() if v is not None}

    async def go(s: Settings) -> int:
        from tollgate.dev.run import run_dev

        # TOLLGATE_*_PORT variables first, then the options over them.
        ports = dataclasses.replace(Ports.from_settings(s), **chosen)
        # Only what the environment names: a previous run's endpoints file is not an outside server.
        stack = DevStack(state_dir=s.state_dir, ports=ports, reset=reset,
                         ui_codec_token=ui_codec_token,
                         database_url=s.dsn if s.source("DATABASE_URL") == "env" else None,
                         temporal_address=s.temporal_address
                         if s.source("TEMPORAL_ADDRESS") == "env" else None)
        await run_dev(stack, workers)
        return Exit.OK

    go.stops_on_interrupt = True  # type: ignore[attr-defined]
    return go


@click.command()
@click.option("--state-dir", default=".tollgate/demo", type=EdgePath(file_okay=False),
              help="where the demo's stack keeps its files (emptied first)")
def demo(state_dir: str) -> int:
    """Play the demo scenario end to end on a stack of its own and check every outcome
    (exit 1 if any differs)."""
    from tollgate.dev.demo import run_demo
    from tollgate.observability.logs import configure_logging

    # Configured here, not in run_demo: structlog keeps the stream it was given.
    configure_logging(logging.WARNING)
    ui_port = settings().dev.ui_port or 8233  # TOLLGATE_UI_PORT, as `tollgate dev` reads it
    differed = asyncio.run(run_demo(Path(state_dir).resolve(), ui_port=ui_port))
    return Exit.REFUSED if differed else Exit.OK
