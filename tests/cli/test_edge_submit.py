"""The producer's side (``tollgate submit``, ``starter.py``, the relay) and CLI arguments:
hostile text and unsigned events never take a business key's workflow id (issue 25)."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from policies.signing import sign
from tollgate.cli.params import ID_TEXT, TEXT
from tollgate.intake.edge import refusal_of
from tollgate.intake.source import split_events
from tollgate.intake.submit import intake_request, workflow_id_for

SECRETS = {"acme": "s3cret"}


def signed(**fields: object) -> str:
    ev = {"tenant_id": "acme", "idempotency_key": "k-1", "payload": {"a": 1}, **fields}
    return json.dumps({**ev, "signature": sign(ev, SECRETS["acme"])})


def test_unsigned_event_is_refused_and_goes_to_its_quarantine_id() -> None:
    raw = json.dumps({"tenant_id": "acme", "idempotency_key": "k-1", "payload": {}})
    refusal = refusal_of(raw)
    assert refusal is not None and refusal.reason_code == "signature_missing"
    request = intake_request(raw, refusal)
    assert request.raw == "" and request.refusal == refusal  # its text never travels


def test_wrong_signature_or_tenant_is_refused_when_the_keys_are_known() -> None:
    assert refusal_of(signed(), SECRETS) is None
    forged = json.dumps({**json.loads(signed()), "signature": "sha256=" + "0" * 64})
    assert refusal_of(forged, SECRETS).reason_code == "bad_signature"  # type: ignore[union-attr]
    other = json.dumps({**json.loads(signed()), "tenant_id": "globex"})
    assert refusal_of(other, SECRETS).reason_code == "unknown_tenant"  # type: ignore[union-attr]


@pytest.mark.parametrize(("raw", "code"), [
    ('{"tenant_id": "acme", "idempotency_key": "k", "x": "\\ud800"}', "lone_surrogate"),
    ('{"tenant_id": "acme", "idempotency_key": "k", "x": "\\u0000"}', "nul"),
    ("[" * 1000 + "]" * 1000, "too_deep"),
])
def test_hostile_text_is_refused_under_a_hash_id(raw: str, code: str) -> None:
    refusal = refusal_of(raw)
    assert refusal is not None and refusal.reason_code == code
    assert workflow_id_for(raw).startswith("quarantine/")


def test_deep_file_is_one_event_not_a_crash() -> None:
    deep = "[" * 5000 + "]" * 5000
    assert split_events(deep) == [deep]


def test_a_pretty_printed_event_with_a_syntax_error_is_one_event_not_one_per_line() -> None:
    """A file holding one indented event, cut short or with a stray comma, was submitted as
    one malformed "event" per line (17 invalid answers, 17 quarantine runs for one event)."""
    text = json.dumps(json.loads(signed(note="x")), indent=2)
    for broken in (text[:-2], text.replace('"payload"', '"payload",', 1)):
        assert split_events(broken) == [broken]
    # JSON lines keep one event per line, a broken line among them included.
    good = signed()
    assert split_events(f"{good}\n{{not json\n{good}\n") == [good, "{not json", good]


def test_trailing_newline_in_key_is_not_a_workflow_id() -> None:
    raw = json.dumps({"tenant_id": "acme", "idempotency_key": "wh-nl-key\n"})
    assert workflow_id_for(raw).startswith("quarantine/")


@pytest.mark.parametrize(("kind", "value"), [(TEXT, "why\x00"), (TEXT, "why\ud800"),
                                             (ID_TEXT, "event/acme/k\n")])
def test_cli_argument_with_hostile_text_is_exit_2(kind: click.ParamType, value: str) -> None:
    @click.command()
    @click.option("--reason", type=kind)
    def cmd(reason: str) -> None:
        click.echo("ran")

    result = CliRunner().invoke(cmd, ["--reason", value])
    assert result.exit_code == 2
    assert "ran" not in result.output and "refused" in result.output


def test_an_event_holding_a_key_twice_is_refused_and_a_file_of_them_is_one_refusal() -> None:
    raw = signed()[:-1] + ', "note": {"a": 1, "a": 2}}'
    refusal = refusal_of(raw, SECRETS)
    assert refusal is not None and refusal.reason_code == "duplicate_key"
    assert refusal.message.startswith("$.note.a: ")
    # An array split into events would keep one value of the key: it stays one text, refused.
    both = "[" + signed() + "," + raw + "]"
    assert split_events(both) == [both]
    assert refusal_of(both, SECRETS).reason_code == "duplicate_key"  # type: ignore[union-attr]


def test_a_byte_order_mark_is_refused_by_name_and_a_file_with_one_is_one_event() -> None:
    """`tollgate submit` and starter.py read a Windows tool's file: "not valid JSON" (from the
    run's intake) sent the producer looking for a syntax error."""
    raw = "\ufeff" + signed()
    refusal = refusal_of(raw, SECRETS)
    assert refusal is not None and refusal.reason_code == "malformed_json"
    assert refusal.message == "$: starts with a byte order mark (U+FEFF); send UTF-8 without it"
    assert workflow_id_for(raw).startswith("quarantine/")
    lines = "\ufeff" + signed() + "\n" + signed(idempotency_key="k-2") + "\n"
    assert split_events(lines) == [lines]
