"""`tollgate serve` and `tollgate dev token`: the HTTP service and local reviewer tokens."""

from __future__ import annotations

import click

from tollgate.runtime.exits import Exit


@click.command()
@click.option("--host", default="127.0.0.1", help="address to listen on")
@click.option("--port", type=click.IntRange(1, 65535), default=None,
              help="port to listen on (default: TOLLGATE_HTTP_PORT, else 8400)")
def serve(host: str, port: int | None) -> int:
    """The HTTP service (webhook intake, review API, inbox) and its outbox relay, until
    Ctrl-C (docs/api.md)."""
    from tollgate.cli.common import classify
    from tollgate.config.settings import Settings
    from tollgate.http.app import run_server

    settings = Settings.from_env()
    try:
        return run_server(settings, host, port)
    except SystemExit as refused:  # said in one line at the start: the command's answer
        if not isinstance(refused.code, str):
            raise
        failure = classify(refused, settings)  # a StartRefused's own code
        click.echo(f"tollgate: {failure.message}", err=True)
        return int(failure.code)


def _id(ctx: click.Context, param: click.Parameter, value: str) -> str:
    import re

    from contracts.base import ID_PATTERN

    if not re.fullmatch(ID_PATTERN, value):
        raise click.BadParameter(f"not a valid id: {value!r}")
    return value


@click.command()
@click.option("--reviewer", required=True, callback=_id, help="who the token names")
@click.option("--role", required=True, callback=_id, help="the reviewer's role")
@click.option("--tenant", required=True, callback=_id, help="the reviewer's tenant")
@click.option("--hours", type=click.FloatRange(0, 720, min_open=True), default=8.0,
              help="how long the token is valid")
def token(reviewer: str, role: str, tenant: str, hours: float) -> int:
    """Print a local reviewer token signed by the dev key in the state folder (for the inbox,
    the review API and `tollgate review ... --token`)."""
    # From where it is defined: tollgate.http.identity, which names it too, imports FastAPI.
    from tollgate.config.settings import Settings
    from tollgate.runtime.identity import issue_dev_token

    click.echo(issue_dev_token(Settings.from_env().state_dir, reviewer=reviewer, role=role,
                               tenant=tenant, ttl_s=int(hours * 3600)))
    return Exit.OK
