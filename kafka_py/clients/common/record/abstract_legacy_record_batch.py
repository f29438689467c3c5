"""Port of clients/src/main/java/org/apache/kafka/common/record/AbstractLegacyRecordBatch.java
(Kafka 2.8.2), with the v0/v1 halves of MemoryRecordsBuilder.java. (Down-conversion for old
consumers is kafka_py/clients/common/record/records_util.py and lazy_down_conversion_records.py.)

In the message formats v0 and v1 a "batch" is one log entry: an uncompressed message, or a
compressed *wrapper* whose value is the compressed log entries of its inner messages. In v0
the inner offsets are absolute; in v1 they are relative (0, 1, ...) and the wrapper carries
the absolute offset of the last one. A v1 wrapper's timestamp is the largest inner timestamp
(CREATE_TIME) or the broker's append time (LOG_APPEND_TIME, which then stands for every inner
message's). ``LegacyRecordBatch`` offers the subset of DefaultRecordBatch's accessors the log
and the tools use, so both kinds of batch read alike.

LZ4 in v0: Kafka before 0.10 wrote the LZ4 frame's header checksum over the wrong bytes
(KAFKA-3160) and still does for magic 0, so that v0 readers accept it. It is written so here,
and any header checksum is accepted when reading v0.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

from kafka_py.clients.common.errors import CorruptRecordException, InvalidRecordException
from kafka_py.clients.common.record.compression import CompressionType, compress, decompress
from kafka_py.clients.common.record.default_record_batch import (
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    Record,
    TimestampType,
)
from kafka_py.clients.common.record.legacy_record import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    LOG_OVERHEAD,
    RECORD_OVERHEAD_V0,
    TIMESTAMP_OFFSET,
    LegacyRecord,
    compute_attributes,
    write_entry,
)

_ENTRY_HEADER = struct.Struct(">qi")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")
_MASK32 = 0xFFFFFFFF


class LegacyRecordBatch:
    """One v0/v1 log entry (Kafka's ByteBufferLegacyRecordBatch): offset, size, message."""

    __slots__ = ("_buffer", "_record", "_inner")

    def __init__(self, buffer) -> None:
        self._buffer = buffer if isinstance(buffer, memoryview) else memoryview(buffer)
        self._record = LegacyRecord(self._buffer[LOG_OVERHEAD:])
        self._inner: Optional[list[Record]] = None

    @property
    def buffer(self) -> memoryview:
        return self._buffer

    @property
    def outer_record(self) -> LegacyRecord:
        return self._record

    @property
    def offset(self) -> int:
        return _ENTRY_HEADER.unpack_from(self._buffer)[0]

    @property
    def last_offset(self) -> int:
        return self.offset

    @property
    def next_offset(self) -> int:
        return self.offset + 1

    @property
    def base_offset(self) -> int:
        """The first inner offset of a wrapper (decompressing it), else the entry's offset."""
        if not self.is_compressed:
            return self.offset
        return self.records()[0].offset

    @property
    def size_in_bytes(self) -> int:
        return len(self._buffer)

    @property
    def magic(self) -> int:
        return self._record.magic

    @property
    def checksum(self) -> int:
        return self._record.checksum

    @property
    def attributes(self) -> int:
        return self._record.attributes

    @property
    def compression_type(self) -> CompressionType:
        return self._record.compression_type

    @property
    def is_compressed(self) -> bool:
        return self._record.is_compressed

    @property
    def timestamp_type(self) -> TimestampType:
        return self._record.timestamp_type

    @property
    def max_timestamp(self) -> int:
        return self._record.timestamp

    # what a v2 batch knows and a legacy one cannot say
    is_transactional = False
    is_control_batch = False
    has_producer_id = False
    producer_id = NO_PRODUCER_ID
    producer_epoch = NO_PRODUCER_EPOCH
    base_sequence = NO_SEQUENCE
    last_sequence = NO_SEQUENCE
    partition_leader_epoch = NO_PARTITION_LEADER_EPOCH

    @property
    def record_count(self) -> int:
        return len(self.records()) if self.is_compressed else 1

    def is_valid(self) -> bool:
        return self._record.is_valid()

    def compute_checksum(self) -> int:
        return self._record.compute_checksum()

    # ---- in-place updates by the log validator (the buffer must be writable) ----------

    def set_last_offset(self, offset: int) -> None:
        """The entry's offset: a message's own, or the last inner offset of a wrapper."""
        _I64.pack_into(self._buffer, 0, offset)
        self._inner = None

    def set_max_timestamp(self, timestamp_type: TimestampType, timestamp: int) -> None:
        """A v1 message's timestamp and timestamp type (with a new CRC); for a wrapper they
        stand for its inner messages when the type is LOG_APPEND_TIME."""
        if self.magic == MAGIC_VALUE_V0:
            raise TypeError("Cannot set timestamp for a record with magic = 0")
        record = self._record
        if record.timestamp_type == timestamp_type and record.timestamp == timestamp:
            return  # nothing changes, so the CRC stays valid
        buf = self._buffer
        buf[LOG_OVERHEAD + ATTRIBUTES_OFFSET] = compute_attributes(self.magic, self.compression_type, timestamp_type)
        _I64.pack_into(buf, LOG_OVERHEAD + TIMESTAMP_OFFSET, timestamp)
        _U32.pack_into(buf, LOG_OVERHEAD + CRC_OFFSET, record.compute_checksum())
        self._inner = None

    def set_partition_leader_epoch(self, epoch: int) -> None:
        raise TypeError("Magic versions prior to 2 do not support partition leader epoch")

    def ensure_valid(self) -> None:
        """The outer message's framing and CRC (Kafka's AbstractLegacyRecordBatch.ensureValid)."""
        if len(self._buffer) < LOG_OVERHEAD + RECORD_OVERHEAD_V0:
            raise CorruptRecordException(f"Record is corrupt (size {len(self._buffer)} is below the minimum "
                                         f"entry size {LOG_OVERHEAD + RECORD_OVERHEAD_V0})")
        self._record.ensure_valid()

    def records(self) -> list[Record]:
        """The messages of this entry with absolute offsets: itself, or a wrapper's inner ones."""
        if self._inner is None:
            self._inner = list(self._read_records())
        return self._inner

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records())

    def _read_records(self) -> Iterator[Record]:
        record = self._record
        if not record.is_compressed:
            yield Record(self.offset, record.timestamp, record.key, record.value)
            return
        for offset, inner in self.inner_entries():
            yield Record(offset, inner.timestamp, inner.key, inner.value)

    def legacy_records(self) -> list[tuple[int, LegacyRecord]]:
        """(absolute offset, message) of each message of this entry: itself, or a wrapper's
        inner ones (the tools print each message's own CRC)."""
        if not self.is_compressed:
            return [(self.offset, self._record)]
        return self.inner_entries()

    def inner_entries(self) -> list[tuple[int, LegacyRecord]]:
        """Kafka's DeepRecordsIterator: a wrapper's inner messages with absolute offsets, each
        checked (CRC, magic equal to the wrapper's, no nested compression)."""
        wrapper = self._record
        compression = wrapper.compression_type
        if compression is CompressionType.ZSTD:
            raise InvalidRecordException(f"Invalid wrapper compressionType found in legacy deep record "
                                         f"iterator {wrapper.magic}")
        value = wrapper.value_view()
        if value is None:
            raise InvalidRecordException(f"Found invalid compressed record set with null value "
                                         f"(magic = {wrapper.magic})")
        data = decompress_legacy(compression, value, wrapper.magic)
        wrapper_type = wrapper.timestamp_type
        wrapper_timestamp = wrapper.timestamp
        entries: list[tuple[int, LegacyRecord]] = []
        for offset, entry in _entries(memoryview(data)):
            inner = LegacyRecord(entry[LOG_OVERHEAD:], wrapper_timestamp, wrapper_type)
            inner.ensure_valid()
            if inner.magic != wrapper.magic:
                raise InvalidRecordException(f"Compressed message magic {inner.magic} does not match wrapper "
                                             f"magic {wrapper.magic}")
            if inner.is_compressed:
                raise InvalidRecordException("Compressed messages must not be nested")
            entries.append((offset, inner))
        if not entries:
            raise InvalidRecordException("Found invalid compressed record set with no inner records")
        if wrapper.magic == MAGIC_VALUE_V1:
            wrapper_offset = self.offset
            last_inner = entries[-1][0]
            if wrapper_offset == 0:
                base = 0
            elif wrapper_offset < last_inner:
                raise InvalidRecordException(
                    f"Found invalid wrapper offset in compressed v1 message set, wrapper offset "
                    f"'{wrapper_offset}' is less than the last inner message offset '{last_inner}' "
                    f"and it is not zero.")
            else:
                base = wrapper_offset - last_inner
            entries = [(base + offset, inner) for offset, inner in entries]
        return entries

    def __repr__(self) -> str:
        return (f"LegacyRecordBatch(magic={self.magic}, offset={self.offset}, "
                f"compression={self.compression_type.type_name}, size={self.size_in_bytes})")


def _entries(buf: memoryview) -> Iterator[tuple[int, memoryview]]:
    """(offset, whole entry) of each log entry of ``buf``; a truncated entry is corrupt."""
    pos = 0
    end = len(buf)
    while pos < end:
        if end - pos < LOG_OVERHEAD:
            raise CorruptRecordException(f"Truncated log entry at position {pos}")
        offset, size = _ENTRY_HEADER.unpack_from(buf, pos)
        if size < RECORD_OVERHEAD_V0 or pos + LOG_OVERHEAD + size > end:
            raise CorruptRecordException(f"Log entry at position {pos} has an invalid size {size}")
        yield offset, buf[pos:pos + LOG_OVERHEAD + size]
        pos += LOG_OVERHEAD + size


def legacy_batches(buffer) -> Iterator[LegacyRecordBatch]:
    """Each log entry of a buffer of v0/v1 entries."""
    for _offset, entry in _entries(buffer if isinstance(buffer, memoryview) else memoryview(buffer)):
        yield LegacyRecordBatch(entry)


# ---------------------------------------------------------------- LZ4 frames of magic 0

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK32


def _xxh32_short(data: bytes) -> int:
    """XXH32 with seed 0 of fewer than 16 bytes (an LZ4 frame descriptor)."""
    h = (_P5 + len(data)) & _MASK32
    pos = 0
    while pos + 4 <= len(data):
        h = (h + int.from_bytes(data[pos:pos + 4], "little") * _P3) & _MASK32
        h = (_rotl(h, 17) * _P4) & _MASK32
        pos += 4
    for b in data[pos:]:
        h = (h + b * _P5) & _MASK32
        h = (_rotl(h, 11) * _P1) & _MASK32
    h ^= h >> 15
    h = (h * _P2) & _MASK32
    h ^= h >> 13
    h = (h * _P3) & _MASK32
    h ^= h >> 16
    return h


def _lz4_header_checksum_at(frame) -> int:
    flags = frame[4]
    return 6 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0)


def compress_legacy(compression: CompressionType, data, magic: int) -> bytes:
    compressed = compress(compression, data)
    if compression is CompressionType.LZ4 and magic == MAGIC_VALUE_V0:
        frame = bytearray(compressed)
        at = _lz4_header_checksum_at(frame)
        frame[at] = (_xxh32_short(bytes(frame[0:at])) >> 8) & 0xFF  # over the magic too, as Kafka v0
        return bytes(frame)
    return compressed


def decompress_legacy(compression: CompressionType, data, magic: int) -> bytes:
    if compression is CompressionType.LZ4 and magic == MAGIC_VALUE_V0 and len(data) > 7:
        frame = bytearray(data)
        at = _lz4_header_checksum_at(frame)
        if at < len(frame):
            frame[at] = (_xxh32_short(bytes(frame[4:at])) >> 8) & 0xFF
        data = bytes(frame)
    return decompress(compression, data)


# ---------------------------------------------------------------- writing


@dataclass(frozen=True, slots=True)
class LegacyEntry:
    """A message to write: its absolute offset, timestamp, key and value."""

    offset: int
    timestamp: int
    key: Optional[bytes]
    value: Optional[bytes]


def build_legacy_records(entries: Iterable[LegacyEntry], magic: int,
                         compression: CompressionType = CompressionType.NONE,
                         timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                         log_append_time: int = NO_TIMESTAMP) -> bytes:
    """MemoryRecordsBuilder for magic 0 and 1: each message its own entry, or all of them in
    one compressed wrapper (inner offsets relative in v1, absolute in v0; the wrapper at the
    last offset, with the largest timestamp or the append time)."""
    if magic not in (MAGIC_VALUE_V0, MAGIC_VALUE_V1):
        raise ValueError(f"Invalid legacy magic {magic}")
    if compression is CompressionType.ZSTD:
        raise ValueError("ZStandard compression needs message format v2")
    items = list(entries)
    if not items:
        return b""
    if magic == MAGIC_VALUE_V0:
        timestamp_type = TimestampType.NO_TIMESTAMP_TYPE
    log_append = timestamp_type == TimestampType.LOG_APPEND_TIME

    def timestamp_of(entry: LegacyEntry) -> int:
        if magic == MAGIC_VALUE_V0:
            return NO_TIMESTAMP
        return log_append_time if log_append else entry.timestamp

    out = bytearray()
    if compression is CompressionType.NONE:
        for e in items:
            write_entry(out, e.offset, magic, timestamp_of(e), e.key, e.value,
                        timestamp_type=TimestampType.CREATE_TIME if magic == MAGIC_VALUE_V0 else timestamp_type)
        return bytes(out)
    base = items[0].offset
    inner = bytearray()
    max_timestamp = NO_TIMESTAMP
    for e in items:
        inner_offset = e.offset - base if magic == MAGIC_VALUE_V1 else e.offset
        timestamp = timestamp_of(e)
        max_timestamp = max(max_timestamp, timestamp)
        # Kafka's MemoryRecordsBuilder gives inner v1 messages the wrapper's timestamp type too
        write_entry(inner, inner_offset, magic, timestamp, e.key, e.value,
                    timestamp_type=TimestampType.CREATE_TIME if magic == MAGIC_VALUE_V0 else timestamp_type)
    wrapper_timestamp = log_append_time if log_append else max_timestamp
    write_entry(out, items[-1].offset, magic, wrapper_timestamp, None,
                compress_legacy(compression, inner, magic), compression,
                TimestampType.CREATE_TIME if magic == MAGIC_VALUE_V0 else timestamp_type)
    return bytes(out)


__all__ = ["LegacyEntry", "LegacyRecordBatch", "build_legacy_records", "compress_legacy",
           "decompress_legacy", "legacy_batches"]
