"""What ``--py-spy`` charges each sample to: the cost table per mechanism in docs/performance.md
is read from these shares, so a sample must land on the mechanism that spent it."""

from __future__ import annotations

from tollgate.bench.pyspy import charge, shares

ROOT = "main (tollgate/bench/worker.py:184);Handle._run (asyncio/events.py:80)"
ACTIVITY = f"{ROOT};_ActivityWorker._run (temporalio/worker/_activity.py:520)"


def test_the_innermost_mechanism_is_charged_and_library_frames_go_to_their_caller() -> None:
    sealed = (f"{ACTIVITY};encrypt (tollgate/codec/payload.py:101);"
              "AESGCM.encrypt (cryptography/hazmat/primitives/ciphers/aead.py:40)")
    assert charge(sealed) == "codec"
    query = (f"{ACTIVITY};read (adapters/postgres/execute.py:30);"
             "Connection._do_execute (asyncpg/connection.py:2066);"
             "_SelectorSocketTransport.write (asyncio/selector_events.py:1057)")
    assert charge(query) == "PostgreSQL client"  # not the event loop it wrote through
    models = f"{ACTIVITY};validate (pydantic/main.py:10)"
    assert charge(models) == "activity worker (SDK)"  # pydantic charged to its caller
    assert charge(f"{ROOT};BaseEventLoop._run_once (asyncio/base_events.py:1884)") == \
        "event loop and threads"


def test_the_levers_of_issue_33_are_charged_to_themselves() -> None:
    clone = (f"{ACTIVITY};DataConverter.with_context (temporalio/converter/_data_converter.py:"
             "209);PydanticPayloadConverter.__init__ (temporalio/contrib/pydantic.py:183)")
    assert charge(clone) == "converter clones (with_context)"
    schema = (f"{ACTIVITY};build_prompt (policies/prompts.py:66);draft_json_schema "
              "(policies/prompts.py:111);model_json_schema (pydantic/main.py:500)")
    assert charge(schema) == "draft JSON schema"


def test_shares_add_up_over_raw_lines() -> None:
    raw = [f"{ACTIVITY};encrypt (tollgate/codec/payload.py:101) 3",
           f"{ROOT};BaseEventLoop._run_once (asyncio/base_events.py:1884) 1",
           "not a py-spy line", ""]
    found = shares(raw)
    assert found["samples"] == 4
    assert found["percent"] == {"codec": 75.0, "event loop and threads": 25.0}
    assert shares([]) == {"samples": 0, "percent": {}}
