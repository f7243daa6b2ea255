"""`tollgate items`: the content library. Save an item (tagging starts after the commit and
never holds the save up), see tagging jobs by state, retry a FAILED job, take a tag off an item.
`items bench`, which times saves against a slow model, is a tool: ``tollgate.cli.bench``."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import click
from pydantic import ValidationError

from contracts.errors import TollgateError
from tollgate.cli.common import Command, identity_of, json_option, pool, token_option
from tollgate.cli.ops_authority import read_scope, reader
from tollgate.cli.output import emit_json
from tollgate.cli.params import ID_TEXT, ROW_ID, TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from tollgate.config.settings import Settings

#: Starts the tagging workflow of (item id, run).
Starter = Callable[[int, int], Awaitable[None]]


@click.group()
def items() -> None:
    """Content library: save, jobs, retry, untag."""


def _starter(s: Settings) -> Awaitable[Starter]:
    """A start function for tagging workflows, or one that fails: with Temporal down the save
    and the retry still count, and the relay starts the job later."""

    async def unreachable(item_id: int, run: int) -> None:
        raise ConnectionError("temporal unreachable")

    async def make() -> Starter:
        from tollgate.intake.items import temporal_starter
        from tollgate.runtime.client import build_client

        try:
            client = await build_client(s.temporal_address, s.namespace, env=s.env)
        except RuntimeError:
            return unreachable
        return temporal_starter(client, s.task_queue)

    return make()


def _store_failure(exc: TollgateError) -> Failure:
    code = Exit.USAGE if exc.error_class.value == "invalid" else Exit.REFUSED
    return Failure(code, f"{exc.error_class.value}: {exc.message}")


#: Every command that names an item or a tag names its owner: a user of one tenant.
tenant_option = click.option("--tenant", required=True, type=ID_TEXT, help="the owner's tenant")


@items.command()
@tenant_option
@click.option("--user", required=True, type=ID_TEXT, help="the owner's id")
@click.option("--url", required=True, type=ID_TEXT, help="the page's address")
@click.option("--title", required=True, type=TEXT, help="the page's title")
@click.option("--description", default="", type=TEXT, help="a short description")
@click.option("--text", "text", default="", type=TEXT,
              help="the page's readable text (the tagger reads it)")
@json_option
def save(tenant: str, user: str, url: str, title: str, description: str, text: str,
         as_json: bool) -> Command:
    """Save a page; tagging runs later and never holds the save up."""
    from contracts.base import ID_BODY
    from contracts.tagging import ItemCapture

    if re.fullmatch(ID_BODY, tenant) is None:
        raise click.UsageError("invalid item: tenant: not a tenant id (letters, digits, . _ : -)")

    try:
        capture = ItemCapture(user_id=user, url=url, title=title, description=description,
                              text=text)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise click.UsageError(
            f"invalid item: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None

    async def go(s: Settings) -> int:
        from adapters.postgres.tagging import TaggingStore
        from tollgate.intake.items import save_item

        async with pool(s, migrate=True) as p:
            try:
                saved = await save_item(TaggingStore(p), await _starter(s), capture,
                                        tenant=tenant)
            except TollgateError as exc:
                raise _store_failure(exc) from None
        note = "tagging started" if saved.started else (
            "already saved" if not saved.created else "tagging queued (relay will start it)")
        if as_json:
            emit_json({"item_id": saved.item_id, "job_state": saved.job_state.value,
                       "created": saved.created, "started": saved.started})
        else:
            click.echo(f"item {saved.item_id}: {saved.job_state.value}, {note}")
        return Exit.OK

    return go


@items.command()
@click.option("--status", type=click.Choice(["PENDING", "PROCESSING", "SUCCEEDED", "FAILED"],
                                            case_sensitive=False),
              help="list the latest jobs in this state (100; FAILED: 500) instead of counts")
@click.option("--tenant", type=ID_TEXT, help="only this tenant's jobs (its counts, or with "
              "--status its latest jobs)")
@token_option
@json_option
def jobs(status: str | None, tenant: str | None, token: str | None, as_json: bool) -> Command:
    """Tagging jobs per state (PENDING growing means no consumer is running), or with --status
    the latest jobs in one state: item, attempts, run, when, last error. With --token, the
    token's tenant's only, counts too (ADR 0076): a --tenant naming another is refused."""

    async def go(s: Settings) -> int:
        from adapters.postgres.tagging import TaggingStore
        from contracts.tagging import JOBS_SHOWN, JobState

        who = await reader(s, token)
        only = read_scope(who, tenant, rows="tagging jobs")
        async with pool(s, migrate=True) as p:
            store = TaggingStore(p)
            if status is None:
                counts = await store.jobs_by_state(only)
            else:
                state = JobState(status.upper())
                listed = await store.recent_jobs(state, JOBS_SHOWN[state], only)
        if status is None:
            if as_json:
                emit_json({state.value: n for state, n in counts.items()})
            else:
                for state, n in counts.items():
                    click.echo(f"{state.value:<11} {n}")
        elif as_json:
            emit_json([job.model_dump(mode="json", exclude={"user_id"}) for job in listed])
        elif not listed:  # a blank answer reads as a command that did nothing
            click.echo(f"no {status.upper()} tagging jobs" + (f" for {only}" if only else ""))
        else:
            for job in listed:
                when = job.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ") if job.updated_at else "-"
                click.echo(f"item {job.item_id:<8} {job.tenant:<12} {job.state.value:<10} "
                           f"attempts {job.attempt_count} run {job.runs} {when} "
                           f"{job.last_error or ''}".rstrip())
        return Exit.OK

    return go


@items.command()
@click.argument("item_id", type=ROW_ID)
@token_option
def retry(item_id: int, token: str | None) -> Command:
    """Retry the FAILED tagging job of ITEM_ID: the owner's, named by the token (its subject and
    tenant), never by a claimed --user; a stranger hears "no tagging job", as for no item."""

    async def go(s: Settings) -> int:
        from adapters.postgres.tagging import TaggingStore
        from tollgate.intake.items import SaveRefused, check_save_roles, retry_failed

        who = await identity_of(token, s)
        try:
            check_save_roles(who.roles, s.identity.item_save_roles)
        except SaveRefused as exc:
            raise Failure(Exit.REFUSED, f"role_not_allowed: {exc}") from None
        async with pool(s, migrate=True) as p:
            try:
                job, started = await retry_failed(TaggingStore(p), await _starter(s),
                                                  tenant=who.tenant, user=who.reviewer,
                                                  item_id=item_id)
            except TollgateError as exc:
                raise _store_failure(exc) from None
        note = "started" if started else "queued (the relay will start it)"
        click.echo(f"item {job.item_id}: {job.state.value} (run {job.runs}), {note}")
        return Exit.OK

    return go


@items.command()
@click.argument("item_id", type=ROW_ID)
@click.argument("tag", type=ID_TEXT)
@tenant_option
@click.option("--user", required=True, type=ID_TEXT, help="the owner's id")
def untag(item_id: int, tag: str, tenant: str, user: str) -> Command:
    """Take TAG off ITEM_ID; no retry brings it back."""

    async def go(s: Settings) -> int:
        from adapters.postgres.tagging import TaggingStore

        async with pool(s, migrate=True) as p:
            removed = await TaggingStore(p).remove_tag(tenant, user, item_id, tag)
        click.echo("removed" if removed else "no such tag on that item")
        return Exit.OK if removed else Exit.REFUSED

    return go

