"""``tollgate bench --replay`` replays what it says it replays: every committed history, with
the workflow code of this checkout, and counts a history it cannot replay as a failure."""

from __future__ import annotations

import asyncio

from temporalio.client import WorkflowHistory

from tests.conftest import CONVERTER
from tollgate.bench.replay import (
    RUNNERS,
    TEST_KEYS_FILE,
    committed_histories,
    replay_speed,
)
from tollgate.codec.keyring import load_key_ring
from tollgate.codec.payload import EncryptionCodec
from tollgate.config.service import CodecSettings


async def test_the_committed_histories_all_replay_in_the_bench() -> None:
    histories = committed_histories()
    assert len(histories) >= 20
    found = await replay_speed(histories, CONVERTER, RUNNERS["worker sandbox"])
    assert found["histories"] == len(histories)
    assert found["failures"] == 0


async def test_a_history_of_another_workflow_counts_as_a_failure() -> None:
    original = committed_histories()[0]
    renamed = original.to_json().replace('"name": "ProcessEvent"', '"name": "NoSuchFlow"')
    renamed = renamed.replace('"name": "ReconcileWrite"', '"name": "NoSuchFlow"')
    broken = WorkflowHistory.from_json("broken", renamed)
    found = await replay_speed([broken], CONVERTER, RUNNERS["default sandbox"])
    assert found["failures"] == 1


def test_decoded_histories_hold_no_ciphertext_and_replay_without_the_codec() -> None:
    from tollgate.bench.replay_decode import decoded_history, plain_converter
    from tollgate.codec.payload import ENCODING

    def sealed_payloads(history: WorkflowHistory) -> int:
        return sum(e.SerializeToString().count(ENCODING) for e in history.events)

    sealed = committed_histories()[:3]
    before = [sealed_payloads(h) for h in sealed]
    assert all(before)
    codec = CONVERTER.payload_codec
    assert isinstance(codec, EncryptionCodec)
    clear = [decoded_history(h, codec) for h in sealed]
    assert [sealed_payloads(h) for h in clear] == [0, 0, 0]
    assert [sealed_payloads(h) for h in sealed] == before  # the originals are left as they are
    found = asyncio.run(replay_speed(clear, plain_converter(), RUNNERS["worker sandbox"]))
    assert (found["histories"], found["failures"]) == (3, 0)


def test_replay_in_processes_replays_everything_and_counts_failures() -> None:
    from tollgate.bench.replay_procs import replay_in_processes

    keys = load_key_ring(CodecSettings.from_env({"TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)}))
    histories = committed_histories()[:4]
    broken = WorkflowHistory.from_json("broken", histories[0].to_json().replace(
        '"name": "ProcessEvent"', '"name": "NoSuchFlow"'))
    found = replay_in_processes([*histories, broken], keys, "worker sandbox", 2)
    assert (found["histories"], found["processes"], found["failures"]) == (5, 2, 1)


async def test_every_variant_replays_is_printed_and_the_codec_share_is_reported_apart() -> None:
    from tollgate.bench.render import replay_lines
    from tollgate.bench.replay import VARIANTS, replay_set

    keys = load_key_ring(CodecSettings.from_env({"TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)}))
    histories = committed_histories()[:4]
    found = await replay_set(histories, keys)
    variants = found["variants"]
    assert list(variants) == [label for label, *_ in VARIANTS]
    assert all((f["histories"], f["failures"]) == (4, 0) for f in variants.values())
    assert all(f["cores_used"] > 0 for f in variants.values())
    # Each pair that differs in the codec alone gets its share: the CPU spent inside the codec
    # while the variant with it replayed (none without it), beside the pair's own figures.
    share = found["codec_share"]
    assert set(share) == {"worker sandbox", "worker sandbox, per core"}
    for label, c in share.items():
        no_codec = label.replace("sandbox", "sandbox, no codec")
        assert 0 < c["codec_cpu_ms"] == variants[label]["codec_cpu_ms_per_history"]
        assert c["codec_cpu_ms"] < c["with_ms"] == variants[label]["cpu_ms_per_history"]
        assert c["without_ms"] == variants[no_codec]["cpu_ms_per_history"]
        assert variants[no_codec]["codec_cpu_ms_per_history"] is None
        assert c["difference_ms"] == round(c["with_ms"] - c["without_ms"], 2)
    printed = "\n".join(replay_lines({"committed": found, "committed_passes": 1}))
    for label in variants:
        assert f"    {label} " in printed
    assert printed.count("codec's share") == 2
