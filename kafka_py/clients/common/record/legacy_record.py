"""Port of clients/src/main/java/org/apache/kafka/common/record/LegacyRecord.java (Kafka 2.8.2):
one message of the message formats v0 and v1, as a log entry (the 8-byte offset and 4-byte
size of Records.LOG_OVERHEAD, then the message).

A message is ``crc (uint32) | magic (int8) | attributes (int8) | [timestamp (int64), v1 only]
| key (int32 length, -1 for null, bytes) | value (the same)``; the CRC is the plain CRC-32
(not v2's CRC-32C) of everything after it. The attributes hold the compression codec in
their low three bits and, in v1, the timestamp type in bit 3. A compressed message is a
*wrapper*: its value is the compressed log entries of the inner messages
(kafka_py/clients/common/record/abstract_legacy_record_batch.py reads and writes those).
"""
from __future__ import annotations

import struct
import zlib
from typing import Optional

from kafka_py.clients.common.errors import CorruptRecordException
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import (
    COMPRESSION_CODEC_MASK,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    TimestampType,
)

CRC_OFFSET = 0
CRC_LENGTH = 4
MAGIC_OFFSET = CRC_OFFSET + CRC_LENGTH  # 4
ATTRIBUTES_OFFSET = MAGIC_OFFSET + 1  # 5
TIMESTAMP_OFFSET = ATTRIBUTES_OFFSET + 1  # 6 (v1)
KEY_SIZE_OFFSET_V0 = ATTRIBUTES_OFFSET + 1  # 6
KEY_SIZE_OFFSET_V1 = TIMESTAMP_OFFSET + 8  # 14
RECORD_OVERHEAD_V0 = KEY_SIZE_OFFSET_V0 + 4 + 4  # 14: crc, magic, attributes, key and value sizes
RECORD_OVERHEAD_V1 = KEY_SIZE_OFFSET_V1 + 4 + 4  # 22
LOG_OVERHEAD = 12  # offset and size

_ENTRY_HEADER = struct.Struct(">qi")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")


def record_overhead(magic: int) -> int:
    if magic == MAGIC_VALUE_V0:
        return RECORD_OVERHEAD_V0
    if magic == MAGIC_VALUE_V1:
        return RECORD_OVERHEAD_V1
    raise ValueError(f"Invalid magic value {magic}")


def compute_attributes(magic: int, compression_type: CompressionType | int,
                       timestamp_type: TimestampType | int) -> int:
    """LegacyRecord.computeAttributes: the codec, and in v1 the timestamp type."""
    attributes = int(compression_type) & COMPRESSION_CODEC_MASK
    if magic > MAGIC_VALUE_V0:
        if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
            raise ValueError("Timestamp type must be provided to compute attributes for message format v1")
        if timestamp_type == TimestampType.LOG_APPEND_TIME:
            attributes |= TIMESTAMP_TYPE_MASK
    return attributes


class LegacyRecord:
    """A view of one v0 or v1 message (the bytes after the log entry's offset and size).

    ``wrapper_timestamp``/``wrapper_timestamp_type`` are set for the inner message of a v1
    wrapper: when the wrapper has LOG_APPEND_TIME its timestamp is every inner message's.
    """

    __slots__ = ("_buffer", "_wrapper_timestamp", "_wrapper_timestamp_type")

    def __init__(self, buffer, wrapper_timestamp: Optional[int] = None,
                 wrapper_timestamp_type: Optional[TimestampType] = None) -> None:
        self._buffer = buffer if isinstance(buffer, memoryview) else memoryview(buffer)
        self._wrapper_timestamp = wrapper_timestamp
        self._wrapper_timestamp_type = wrapper_timestamp_type

    @property
    def buffer(self) -> memoryview:
        return self._buffer

    def size_in_bytes(self) -> int:
        return len(self._buffer)

    @property
    def checksum(self) -> int:
        return _U32.unpack_from(self._buffer, CRC_OFFSET)[0]

    def compute_checksum(self) -> int:
        return zlib.crc32(self._buffer[MAGIC_OFFSET:])

    @property
    def magic(self) -> int:
        return self._buffer[MAGIC_OFFSET]

    @property
    def attributes(self) -> int:
        return self._buffer[ATTRIBUTES_OFFSET]

    @property
    def compression_type(self) -> CompressionType:
        return CompressionType.for_id(self.attributes & COMPRESSION_CODEC_MASK)

    @property
    def is_compressed(self) -> bool:
        return self.attributes & COMPRESSION_CODEC_MASK != 0

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == MAGIC_VALUE_V0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self._wrapper_timestamp_type is TimestampType.LOG_APPEND_TIME:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else TimestampType.CREATE_TIME

    @property
    def timestamp(self) -> int:
        if self.magic == MAGIC_VALUE_V0:
            return NO_TIMESTAMP
        if self._wrapper_timestamp_type is TimestampType.LOG_APPEND_TIME and self._wrapper_timestamp is not None:
            return self._wrapper_timestamp
        return _I64.unpack_from(self._buffer, TIMESTAMP_OFFSET)[0]

    def _key_size_offset(self) -> int:
        return KEY_SIZE_OFFSET_V0 if self.magic == MAGIC_VALUE_V0 else KEY_SIZE_OFFSET_V1

    def _field(self, pos: int) -> tuple[Optional[memoryview], int]:
        size = _I32.unpack_from(self._buffer, pos)[0]
        if size < 0:
            return None, pos + 4
        return self._buffer[pos + 4:pos + 4 + size], pos + 4 + size

    def key_view(self) -> Optional[memoryview]:
        return self._field(self._key_size_offset())[0]

    def value_view(self) -> Optional[memoryview]:
        _key, pos = self._field(self._key_size_offset())
        return self._field(pos)[0]

    @property
    def key(self) -> Optional[bytes]:
        key = self.key_view()
        return None if key is None else bytes(key)

    @property
    def value(self) -> Optional[bytes]:
        value = self.value_view()
        return None if value is None else bytes(value)

    def validation_error(self) -> Optional[CorruptRecordException]:
        """Why this message cannot be read (framing, sizes, CRC), or None."""
        buf = self._buffer
        size = len(buf)
        if size < RECORD_OVERHEAD_V0:
            return CorruptRecordException(f"Record is corrupt (size {size} is below the minimum record overhead "
                                          f"{RECORD_OVERHEAD_V0})")
        magic = buf[MAGIC_OFFSET]
        if magic not in (MAGIC_VALUE_V0, MAGIC_VALUE_V1):
            return CorruptRecordException(f"Invalid magic found in record: {magic}")
        if size < record_overhead(magic):
            return CorruptRecordException(f"Record is corrupt (size {size} is below the minimum v{magic} record "
                                          f"overhead {record_overhead(magic)})")
        pos = self._key_size_offset()
        for name in ("key", "value"):
            if pos + 4 > size:
                # a key that takes the bytes the value's length should be in
                return CorruptRecordException(f"Record is corrupt (no room for its {name} size)")
            length = _I32.unpack_from(buf, pos)[0]
            pos += 4
            if length < -1 or (length > 0 and pos + length > size):
                return CorruptRecordException(f"Record is corrupt (its {name} size {length} does not fit)")
            if length > 0:
                pos += length
        if pos != size:
            return CorruptRecordException(f"Record is corrupt ({size - pos} bytes after its value)")
        if self.checksum != self.compute_checksum():
            return CorruptRecordException(f"Record is corrupt (stored crc = {self.checksum}, computed crc = "
                                          f"{self.compute_checksum()})")
        return None

    def is_valid(self) -> bool:
        return self.validation_error() is None

    def ensure_valid(self) -> None:
        error = self.validation_error()
        if error is not None:
            raise error

    def __repr__(self) -> str:
        return (f"LegacyRecord(magic={self.magic}, attributes={self.attributes}, "
                f"timestamp={self.timestamp}, size={len(self._buffer)})")


def write_record(out: bytearray, magic: int, timestamp: int, key, value,
                 compression_type: CompressionType | int = CompressionType.NONE,
                 timestamp_type: TimestampType | int = TimestampType.CREATE_TIME) -> int:
    """LegacyRecord.write: one message (no log entry header) appended to ``out``; its size."""
    start = len(out)
    out += b"\0\0\0\0"
    out.append(magic)
    out.append(compute_attributes(magic, compression_type, timestamp_type))
    if magic > MAGIC_VALUE_V0:
        out += _I64.pack(timestamp)
    for field in (key, value):
        if field is None:
            out += _I32.pack(-1)
        else:
            out += _I32.pack(len(field))
            out += field
    _U32.pack_into(out, start, zlib.crc32(memoryview(out)[start + MAGIC_OFFSET:]))
    return len(out) - start


def write_entry(out: bytearray, offset: int, magic: int, timestamp: int, key, value,
                compression_type: CompressionType | int = CompressionType.NONE,
                timestamp_type: TimestampType | int = TimestampType.CREATE_TIME) -> int:
    """One log entry: offset, size, then the message; its size with the log overhead."""
    start = len(out)
    out += _ENTRY_HEADER.pack(offset, 0)
    size = write_record(out, magic, timestamp, key, value, compression_type, timestamp_type)
    _I32.pack_into(out, start + 8, size)
    return LOG_OVERHEAD + size


def record_size(magic: int, key, value) -> int:
    """LegacyRecord.recordSize: a message's size without the log overhead."""
    return (record_overhead(magic) + (0 if key is None else len(key))
            + (0 if value is None else len(value)))


__all__ = ["LOG_OVERHEAD", "LegacyRecord", "RECORD_OVERHEAD_V0", "RECORD_OVERHEAD_V1", "compute_attributes",
           "record_overhead", "record_size", "write_entry", "write_record"]
