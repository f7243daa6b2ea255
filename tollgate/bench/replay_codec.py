"""The codec's own share of a replay, measured where it is spent: the CPU time of the thread
inside each ``encode`` and ``decode`` call of the payload codec during the timed replay.

The difference between a variant with the codec and its twin without it (``codec_share`` in
``tollgate.bench.replay``) says the same in principle, but it subtracts two wall-clock runs on
a shared machine and came out negative at load 2 to 5 (docs/performance.md); the thread's CPU time
in the codec does not move with the other processes. The codec is the service's own
``EncryptionCodec`` (a subclass that only adds the clock), in the service's own converter.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from temporalio.api.common.v1 import Payload
from temporalio.converter import DataConverter

from tollgate.codec.keyring import KeyRing
from tollgate.codec.payload import EncryptionCodec, encrypted_data_converter

#: Seconds of thread CPU spent inside the codec in this process, and the payloads it handled.
_SPENT: dict[str, float] = {"cpu_s": 0.0, "payloads": 0}


class TimedCodec(EncryptionCodec):
    """``EncryptionCodec`` with a clock around each call (≈ 1 µs per call of overhead); its
    variants per key share the class and so the tally."""

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        started = time.thread_time()
        try:
            return await super().encode(payloads)  # never suspends: the work is synchronous
        finally:
            _SPENT["cpu_s"] += time.thread_time() - started
            _SPENT["payloads"] += len(payloads)

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        started = time.thread_time()
        try:
            return await super().decode(payloads)
        finally:
            _SPENT["cpu_s"] += time.thread_time() - started
            _SPENT["payloads"] += len(payloads)


def timed_converter(keys: KeyRing) -> DataConverter:
    """The service's converter (``encrypted_data_converter``) with the codec timed."""
    return dataclasses.replace(encrypted_data_converter(keys), payload_codec=TimedCodec(keys))


def codec_spent() -> tuple[float, int]:
    """Seconds of CPU inside the codec so far in this process, and payloads handled."""
    return _SPENT["cpu_s"], int(_SPENT["payloads"])
