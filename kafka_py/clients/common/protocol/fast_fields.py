"""The field writers the hand-written message codecs (kafka_py/clients/common/protocol/fast_*.py) share:
strings, array lengths and unsigned varints laid out as Kafka's generated message classes
write them (clients/src/main/java/org/apache/kafka/common/protocol/types/Type.java and
common/utils/ByteUtils.java, Kafka 2.8.2). No counterpart in Kafka's source as code: Kafka
has one generated writer per message and needs no second one.

Each writer appends to a ``bytearray``. A value a layout cannot hold (a legacy string over
32,767 bytes) raises ``FallBack``, and the codec hands the message to the generic (kio)
writer, which writes it or fails as it always did.
"""
from __future__ import annotations

import datetime
import struct
from typing import Any, Optional

I16 = struct.Struct(">h")
I32 = struct.Struct(">i")

# Byte strings at least this long stay chunks of their own (codec.ChunkWriter's rule).
PASS_THROUGH_BYTES = 4096

BYTES_TYPES = (bytes, bytearray, memoryview)


class FallBack(Exception):
    """The message holds something only the generic writer handles."""


def uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# Compact lengths (n + 1) below 128 are one byte; precomputed for the common counts.
_SMALL_UVARINTS = [bytes((n,)) for n in range(128)]


def compact_length(n: int) -> bytes:
    """Compact array/string length of ``n`` elements (n + 1; -1 is null)."""
    n += 1
    return _SMALL_UVARINTS[n] if n < 128 else uvarint(n)


def millis(value: Any) -> int:
    """kio's timedelta writers: round(total_seconds * 1000)."""
    return round(value.total_seconds() * 1000)


def datetime_millis(value: Optional[datetime.datetime]) -> int:
    """kio's nullable datetime_i64 writer: None is -1."""
    return -1 if value is None else round(value.timestamp() * 1000)


def legacy_string(out: bytearray, value: str) -> None:
    data = value.encode()
    if len(data) > 0x7FFF:
        raise FallBack()
    out += I16.pack(len(data))
    out += data


def nullable_legacy_string(out: bytearray, value: Optional[str]) -> None:
    if value is None:
        out += b"\xff\xff"
    else:
        legacy_string(out, value)


def compact_string(out: bytearray, value: Optional[str]) -> None:
    if value is None:
        out.append(0)
        return
    data = value.encode()
    out += compact_length(len(data))
    out += data


_INT32_ARRAYS: dict[int, struct.Struct] = {}


def int32_array(out: bytearray, values: Any, flexible: bool) -> None:
    """An array of int32 (replica lists, partition lists) in one struct call."""
    n = len(values)
    packer = _INT32_ARRAYS.get(n)
    if packer is None:
        packer = _INT32_ARRAYS[n] = struct.Struct(f">{n}i")
    out += compact_length(n) if flexible else I32.pack(n)
    out += packer.pack(*values)


__all__ = [
    "BYTES_TYPES",
    "FallBack",
    "I16",
    "I32",
    "PASS_THROUGH_BYTES",
    "compact_length",
    "compact_string",
    "datetime_millis",
    "int32_array",
    "legacy_string",
    "millis",
    "nullable_legacy_string",
    "uvarint",
]
