"""Port of core/src/main/scala/kafka/utils/Json.scala (Kafka 2.8.2): JSON as Kafka's Jackson
writes and reads it, for the znodes, the ACL and token records and every other JSON a broker
stores.

Writing is compact (no whitespace) with non-ASCII characters written as UTF-8 rather than
escaped, Jackson's defaults, so the bytes match a Kafka broker's. The key order is the
caller's: ZkData builds its maps in the order Kafka's would iterate them.
"""
from __future__ import annotations

import json
from typing import Any


def encode_as_bytes(obj: Any) -> bytes:
    """Json.encodeAsBytes: no whitespace, non-ASCII written as UTF-8, not escaped."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def parse_bytes(data: bytes | None) -> Any | None:
    """Json.parseBytes: None for absent, empty or unparseable data."""
    if not data:
        return None
    try:
        return json.loads(bytes(data).decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None


def try_parse_bytes(data: bytes | None) -> Any:
    """Json.tryParseBytes: the parsed value, or ValueError saying why not."""
    if data is None:
        raise ValueError("no data")
    return json.loads(bytes(data).decode("utf-8"))


__all__ = ["encode_as_bytes", "parse_bytes", "try_parse_bytes"]
