"""`tollgate submit`: the producer's command. One line (or one JSON object) per event."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import click

from adapters.broker.cancel import within
from tollgate.cli.common import Command, connect, json_option
from tollgate.cli.params import EdgePath
from tollgate.runtime.exits import Exit, Failure

#: How long one event's answer may take before the command stops and says why (a decision's
#: patience, ``DECISION_TIMEOUT``, is the same). Without it, a submit that no worker takes
#: waited for ever: the intake update is answered by the event's workflow.
SUBMIT_PATIENCE = timedelta(seconds=30)

if TYPE_CHECKING:
    from temporalio.client import Client

    from contracts import IntakeAck
    from tollgate.config.settings import Settings
    from tollgate.intake.recorded import RecordedEnd


def read_events(paths: tuple[str, ...]) -> list[str]:
    """Every event of every file, in order; a missing or unreadable file is one line, exit 5."""
    from tollgate.intake.source import read_source, split_events

    raws: list[str] = []
    for path in paths:
        try:
            text = read_source(path)
        except FileNotFoundError:
            raise Failure(Exit.FILE, f"{path}: no such file") from None
        except IsADirectoryError:
            raise Failure(Exit.FILE, f"{path}: is a folder, not an event file") from None
        except PermissionError:
            raise Failure(Exit.FILE, f"{path}: permission denied") from None
        except UnicodeDecodeError:
            raise Failure(Exit.FILE, f"{path}: not UTF-8 text") from None
        except OSError as exc:
            raise Failure(Exit.FILE, f"{path}: cannot read it ({exc.strerror})") from None
        raws.extend(split_events(text))
    return raws


def restamp_and_sign(raws: list[str], secrets: dict[str, str]) -> list[str]:
    """Dev only: stamp ``occurred_at`` with now (a committed example stays fresh) and sign
    each event with its tenant's key. Text the edge rules refuse (not JSON, too deep, NUL,
    lone surrogates, huge numbers) is passed on unchanged: the intake refuses it, one line."""
    from contracts.events import MAX_EVENT_CHARS
    from policies import edge_text
    from policies.signing import sign_json

    now = datetime.now(UTC).isoformat()
    signed = []
    for raw in raws:
        # Checked before any json.loads or encode: a 1,000-deep file recursed, and a lone
        # surrogate could not be encoded to sign (exit 9 before this).
        data, bad = edge_text.load_json(raw, max_chars=MAX_EVENT_CHARS)
        if bad is not None:
            signed.append(raw)
            continue
        if isinstance(data, dict) and "occurred_at" in data:
            data["occurred_at"] = now
            raw = json.dumps(data, ensure_ascii=False)
        signed.append(sign_json(raw, secrets))
    return signed


@click.command()
@click.argument("files", nargs=-1, required=True, metavar="FILE...",
                type=EdgePath(allow_dash=True))
@click.option("--sign", is_flag=True,
              help="dev only: restamp occurred_at with now and sign each event with its "
                   "tenant's key from the tenants file (a stand-in for the producer)")
@json_option
def submit(files: tuple[str, ...], sign: bool, as_json: bool) -> Command:
    """Producer: submit the events in FILE... (one event, a JSON array, or JSON lines; - reads
    standard input). Each event is answered at once: accepted, duplicate or invalid
    (quarantined with its reason). Exit 1 when any event was invalid."""

    async def go(s: Settings) -> int:
        raws = read_events(files)
        if sign:
            try:
                secrets = s.tenant_secrets()
            except SystemExit as exc:
                raise Failure(Exit.FILE, str(exc.code)) from None
            raws = restamp_and_sign(raws, secrets)
        try:  # with the tenants' keys a wrong signature is refused here too, as over HTTP
            known: dict[str, str] | None = s.tenant_secrets()
        except SystemExit:
            known = None
        client = await connect(s)
        from tollgate.intake.recorded import recorded_ends_at
        from tollgate.intake.submit import describe  # the SDK, once there is a server to talk to

        def show(ack: IntakeAck) -> None:
            click.echo(ack.model_dump_json(exclude_none=True) if as_json else describe(ack))

        acks: list[IntakeAck] = []
        # PostgreSQL, when there is one, for a repeat's end recorded after its run (ADR 0062).
        async with recorded_ends_at(s.dsn) as recorded:
            for n, raw in enumerate(raws, 1):
                acks.append(await answered(client, s, raw, known, n, len(raws),
                                           SUBMIT_PATIENCE, recorded))
                show(acks[-1])
        return Exit.OK if all(a.status != "invalid" for a in acks) else Exit.REFUSED

    return go


async def answered(client: Client, s: Settings, raw: str, known: dict[str, str] | None, n: int,
                   total: int, patience: timedelta,
                   recorded: RecordedEnd | None = None) -> IntakeAck:
    """Event ``n``'s answer, or exit 3 in one line when none comes within ``patience``: the
    line says why when it can tell (no worker polls the task queue, the server does not
    answer) and that sending again is safe (the key dedupes: a taken event answers as a
    duplicate), so the events after it are not sent."""
    from tollgate.intake.reach import why_not_taking
    from tollgate.intake.submit import submit

    try:
        return await within(
            submit(client, raw, task_queue=s.task_queue, tenant_secrets=known,
                   recorded=recorded),
            patience.total_seconds())
    except TimeoutError:
        why = await why_not_taking(client, s.task_queue)
        reason = {None: "workers poll, none answered: its run may be failing on it",
                  "no_worker": f"no worker polls task queue {s.task_queue}"}.get(
                      why, f"Temporal answered {why}")
        rest = f"; events {n + 1}-{total} were not sent" if n < total else ""
        raise Failure(Exit.UNREACHABLE,
                      f"event {n} of {total}: no answer within {patience.total_seconds():g} s "
                      f"({reason}){rest}; it may still be taken: submit again once workers "
                      "run (a repeat is answered as a duplicate)") from None
