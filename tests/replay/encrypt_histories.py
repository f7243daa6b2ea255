"""Encrypt committed histories written before payload encryption, in place:
`python -m tests.replay.encrypt_histories FILE...`.

Histories of older workflow code cannot be recorded again (that code is gone), so their
payloads are sealed with the test key ring exactly where a codec would have sealed them. Left in
clear, as the SDK leaves them: search attributes, and the local-activity and patch markers' own
``data``/``patch-data`` details, which the SDK core writes without the codec.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from temporalio.api.common.v1 import Payload

from tests.conftest import TEST_KEYS
from tollgate.codec.payload import ENCODING, EncryptionCodec

_LEFT_CLEAR = {"searchAttributes", "data", "patch-data"}


def seal(node: Any, codec: EncryptionCodec) -> Any:
    if isinstance(node, list):
        return [seal(item, codec) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("metadata"), dict) and "encoding" in node["metadata"]:
        payload = json_format.ParseDict(node, Payload())
        if payload.metadata["encoding"] == ENCODING:
            return node
        return json_format.MessageToDict(codec.encrypt(payload))
    return {k: v if _left_clear(k, v) else seal(v, codec) for k, v in node.items()}


def _left_clear(key: str, value: Any) -> bool:
    # A marker's ``details`` map has "data" (core's own record) holding payloads; elsewhere a
    # field named data holds a payload's bytes, never a dict.
    if key == "data":
        return isinstance(value, dict) and "payloads" in value
    return key in _LEFT_CLEAR


async def main(paths: list[str]) -> None:
    codec = EncryptionCodec(TEST_KEYS)
    for name in paths:
        path = Path(name)
        data = seal(json.loads(path.read_text()), codec)
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"sealed {path}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
