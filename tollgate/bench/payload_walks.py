"""What moving the encryption from the codec into the payload converter would save the worker:
``python -m tollgate.bench.payload_walks`` (a few seconds, no stack).

The lever (docs/performance.md, "The payload converter lever, examined") rested on the SDK
walking an activation's payloads only when a codec is set. temporalio 1.35 walks every
activation three times on the way in and every completion three times on the way out (external
storage references, external storage, the codec), codec or not, so a converter that encrypts
would save only the codec's own calls, and the sealing itself would move into the converter.
This prints, per activation and completion pair (one activity result in, one activity's
arguments out, 1.5 kB each): the SDK's walks without a codec, the walks with the service's codec,
and the AES-GCM open and seal the converter would do instead. The lowest of five rounds.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

from temporalio.api.common.v1 import Payload
from temporalio.bridge import worker as bridge_worker
from temporalio.bridge.proto.workflow_activation import WorkflowActivation
from temporalio.bridge.proto.workflow_completion import WorkflowActivationCompletion
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter

from tollgate.codec.keyring import new_key_ring
from tollgate.codec.payload import EncryptionCodec, encrypted_data_converter

PAIRS = 4000
ROUNDS = 5
_CLEAR = Payload(metadata={"encoding": b"json/plain"},
                 data=json.dumps({"text": "x" * 1500}).encode())


def activation(result: Payload) -> WorkflowActivation:
    act = WorkflowActivation(run_id="r")
    act.jobs.add().resolve_activity.result.completed.result.CopyFrom(result)
    return act


def completion(argument: Payload) -> WorkflowActivationCompletion:
    done = WorkflowActivationCompletion(run_id="r")
    command = done.successful.commands.add().schedule_activity
    command.seq, command.activity_type = 1, "step"
    command.arguments.append(argument)
    return done


def _cpu_us(body: Callable[[], object], n: int = PAIRS) -> float:
    start = time.process_time()
    for _ in range(n):
        body()
    return (time.process_time() - start) / n * 1e6


async def _walks_us(converter: DataConverter, result: Payload, n: int = PAIRS) -> float:
    start = time.process_time()
    for _ in range(n):
        await bridge_worker.decode_activation(activation(result), converter, False, 1)
        await bridge_worker.encode_completion(completion(_CLEAR), converter, False, 1)
    return (time.process_time() - start) / n * 1e6


async def measure() -> dict[str, float]:
    """µs of CPU per activation and completion pair: the lowest of ``ROUNDS`` rounds."""
    service = encrypted_data_converter(new_key_ring())
    codec = service.payload_codec
    assert isinstance(codec, EncryptionCodec)
    sealed = codec.encrypt(_CLEAR)
    rounds: dict[str, list[float]] = {"walks without a codec": [], "walks with the codec": [],
                                      "AES-GCM open and seal": []}
    for _ in range(ROUNDS):
        build = _cpu_us(lambda: (activation(_CLEAR), completion(_CLEAR)))
        rounds["walks with the codec"].append(await _walks_us(service, sealed) - build)
        rounds["walks without a codec"].append(
            await _walks_us(pydantic_data_converter, _CLEAR) - build)
        rounds["AES-GCM open and seal"].append(
            _cpu_us(lambda: (codec.decrypt(sealed), codec.encrypt(_CLEAR))))
    return {name: min(values) for name, values in rounds.items()}


def main() -> None:
    figures = asyncio.run(measure())
    for name, us in figures.items():
        print(f"{name:24} {us:7.1f} µs per activation and completion")
    saved = (figures["walks with the codec"] - figures["walks without a codec"]
             - figures["AES-GCM open and seal"])
    print(f"{'a converter would save':24} {saved:7.1f} µs per activation and completion")


if __name__ == "__main__":
    main()
