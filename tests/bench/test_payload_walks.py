"""Why the encryption stays a codec (docs/performance.md, "The payload converter lever,
examined"): the SDK walks every activation's and completion's payloads with or without a codec,
so a converter that encrypts would not spare the walks. Should an SDK upgrade skip them when no
codec is set, this fails, and the lever is worth measuring again."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from temporalio.api.common.v1 import Payload
from temporalio.bridge import worker as bridge_worker
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter

from tollgate.bench.payload_walks import activation, completion


@dataclasses.dataclass(frozen=True)
class Counting(DataConverter):
    """No codec; counts the payload sequences the SDK hands the codec step."""

    seen: list[int] = dataclasses.field(default_factory=list)

    async def _decode_payload_sequence(self, payloads: Sequence[Payload]) -> list[Payload]:
        self.seen.append(len(payloads))
        return await super()._decode_payload_sequence(payloads)

    async def _encode_payload_sequence(self, payloads: Sequence[Payload]) -> list[Payload]:
        self.seen.append(len(payloads))
        return await super()._encode_payload_sequence(payloads)


async def test_the_sdk_walks_payloads_even_without_a_codec() -> None:
    converter = Counting(payload_converter_class=pydantic_data_converter.payload_converter_class)
    assert converter.payload_codec is None
    payload = Payload(metadata={"encoding": b"json/plain"}, data=b'"hello"')
    await bridge_worker.decode_activation(activation(payload), converter, False, 1)
    await bridge_worker.encode_completion(completion(payload), converter, False, 1)
    assert converter.seen == [1, 1], (
        "the SDK no longer visits payloads when no codec is set: encryption in the payload "
        "converter would now spare those walks (docs/performance.md)")
