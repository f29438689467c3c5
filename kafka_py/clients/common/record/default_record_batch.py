"""Port of clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java
and DefaultRecord.java (the magic v2 record batch and its records).

Batch layout (big-endian), the same on the wire and on disk::

    0  baseOffset            int64   \\ LOG_OVERHEAD (12 bytes)
    8  length                int32   /  length = bytes after this field
    12 partitionLeaderEpoch  int32
    16 magic                 int8    (2)
    17 crc                   uint32  CRC-32C of bytes [21, end)
    21 attributes            int16   codec:0-2 timestampType:3 transactional:4 control:5
    23 lastOffsetDelta       int32
    27 baseTimestamp         int64
    35 maxTimestamp          int64
    43 producerId            int64
    51 producerEpoch         int16
    53 baseSequence          int32
    57 recordCount           int32
    61 records (compressed as one block when the codec is not none)

baseOffset and partitionLeaderEpoch sit before the CRC'd range, which is why the
broker can assign offsets and the leader epoch by writing those bytes in place
without recomputing the checksum.

A record (DefaultRecord) is ``varint length, int8 attributes, varlong
timestampDelta, varint offsetDelta, varint keyLength + key, varint valueLength +
value, varint headerCount, headers (varint keyLength + utf-8 key, varint
valueLength + value)``, with zig-zag varints and -1 meaning null.

DefaultRecordBatch is a view: header fields are read with ``struct.unpack_from``
at fixed offsets of the underlying memoryview, so nothing is copied. Records are
only decoded by ``records()``/``__iter__`` (tools, consumers of our own logs,
tests), never on the broker's append or fetch paths.
"""
from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Iterable, Iterator, Optional, Sequence

from crc32c import crc32c

from kafka_py.clients.common.errors import CorruptRecordException, InvalidRecordException
from kafka_py.clients.common.errors import UnsupportedForMessageFormatException
from kafka_py.clients.common.record.compression import CompressionType, compress, decompress
from kafka_py.core.utils.java_limits import INT_MAX

logger = logging.getLogger(__name__)

# ---- layout -----------------------------------------------------------------
BASE_OFFSET_OFFSET = 0
BASE_OFFSET_LENGTH = 8
LENGTH_OFFSET = BASE_OFFSET_OFFSET + BASE_OFFSET_LENGTH  # 8
LENGTH_LENGTH = 4
LOG_OVERHEAD = LENGTH_OFFSET + LENGTH_LENGTH  # 12, Records.LOG_OVERHEAD
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
LAST_OFFSET_DELTA_OFFSET = 23
BASE_TIMESTAMP_OFFSET = 27
MAX_TIMESTAMP_OFFSET = 35
PRODUCER_ID_OFFSET = 43
PRODUCER_EPOCH_OFFSET = 51
BASE_SEQUENCE_OFFSET = 53
RECORDS_COUNT_OFFSET = 57
RECORDS_OFFSET = 61
RECORD_BATCH_OVERHEAD = RECORDS_OFFSET  # 61
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1  # 17

# ---- sentinel values ----------------------------------------------------------
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1
NO_TIMESTAMP = -1
CURRENT_MAGIC_VALUE = 2
MAGIC_VALUE_V0 = 0
MAGIC_VALUE_V1 = 1
MAGIC_VALUE_V2 = 2
# LegacyRecord.RECORD_OVERHEAD_V0, the smallest legacy (v0) message: the smallest "length" a
# well-formed log entry can have.
RECORD_OVERHEAD_V0 = 14

# ---- attribute bits -----------------------------------------------------------
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20

# The least bytes a record can take: 1-byte length, attributes, timestamp
# delta, offset delta, null key, null value, zero headers.
MIN_RECORD_SIZE = 7
# Record overhead excluding key, value and headers (DefaultRecord.MAX_RECORD_OVERHEAD).
MAX_RECORD_OVERHEAD = 21

_HEADER = struct.Struct(">qiibIhiqqqhii")  # the 61 bytes above
_HEADER_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. recordCount (40 bytes)
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I16 = struct.Struct(">h")
_I8 = struct.Struct(">b")
_unpack_i64 = _I64.unpack_from
_unpack_i32 = _I32.unpack_from
_unpack_u32 = _U32.unpack_from
_unpack_i16 = _I16.unpack_from


class TimestampType(IntEnum):
    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def type_name(self) -> str:
        return {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}[int(self)]

    @classmethod
    def for_name(cls, name: str) -> "TimestampType":
        for t in cls:
            if t.type_name == name:
                return t
        raise ValueError(f"Invalid timestamp type {name}")

    def __str__(self) -> str:
        return self.type_name


def increment_sequence(sequence: int, increment: int) -> int:
    """DefaultRecordBatch.incrementSequence: sequence numbers wrap from Integer.MAX_VALUE back to 0."""
    if sequence > INT_MAX - increment:
        return increment - (INT_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """DefaultRecordBatch.decrementSequence, the inverse of increment_sequence."""
    if sequence < decrement:
        return INT_MAX - (decrement - sequence) + 1
    return sequence - decrement


def compute_attributes(
    compression_type: CompressionType | int,
    timestamp_type: TimestampType | int,
    is_transactional: bool,
    is_control: bool,
) -> int:
    if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
        raise ValueError("Timestamp type must be provided to compute attributes for message format v2 and above")
    attributes = int(compression_type) & COMPRESSION_CODEC_MASK
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    return attributes


@dataclass(frozen=True, slots=True)
class Record:
    """One decoded record of a batch, with absolute offset, timestamp and sequence."""

    offset: int
    timestamp: int
    key: Optional[bytes]
    value: Optional[bytes]
    headers: tuple[tuple[str, Optional[bytes]], ...] = ()
    sequence: int = NO_SEQUENCE

    def has_key(self) -> bool:
        return self.key is not None

    def has_value(self) -> bool:
        return self.value is not None


@dataclass(frozen=True, slots=True)
class SimpleRecord:
    """Input to the batch builders (Kafka's SimpleRecord)."""

    key: Optional[bytes]
    value: Optional[bytes]
    timestamp: int = NO_TIMESTAMP
    headers: tuple[tuple[str, Optional[bytes]], ...] = ()


def as_byte_view(buffer) -> memoryview:
    """A flat memoryview of unsigned bytes over ``buffer`` (no copy)."""
    mv = buffer if isinstance(buffer, memoryview) else memoryview(buffer)
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")  # indexing must give ints 0..255
    return mv


class DefaultRecordBatch:
    """A magic v2 batch viewed in place over ``buffer`` (bytes, bytearray or memoryview).

    The buffer should hold exactly one batch; in-place setters need a writable one.
    """

    __slots__ = ("_buffer",)

    def __init__(self, buffer) -> None:
        mv = as_byte_view(buffer)
        if len(mv) < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordException(
                f"Record batch is corrupt (the buffer holds {len(mv)} bytes, less than the "
                f"minimum batch overhead {RECORD_BATCH_OVERHEAD})"
            )
        self._buffer = mv

    # ---- header fields -------------------------------------------------------
    @property
    def buffer(self) -> memoryview:
        return self._buffer

    @property
    def base_offset(self) -> int:
        return _unpack_i64(self._buffer, BASE_OFFSET_OFFSET)[0]

    @property
    def last_offset_delta(self) -> int:
        return _unpack_i32(self._buffer, LAST_OFFSET_DELTA_OFFSET)[0]

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def size_in_bytes(self) -> int:
        return LOG_OVERHEAD + _unpack_i32(self._buffer, LENGTH_OFFSET)[0]

    @property
    def partition_leader_epoch(self) -> int:
        return _unpack_i32(self._buffer, PARTITION_LEADER_EPOCH_OFFSET)[0]

    @property
    def magic(self) -> int:
        b = self._buffer[MAGIC_OFFSET]
        return b - 256 if b > 127 else b

    @property
    def checksum(self) -> int:
        return _unpack_u32(self._buffer, CRC_OFFSET)[0]

    @property
    def attributes(self) -> int:
        return _unpack_i16(self._buffer, ATTRIBUTES_OFFSET)[0]

    @property
    def compression_type(self) -> CompressionType:
        return CompressionType.for_id(self.attributes & COMPRESSION_CODEC_MASK)

    @property
    def is_compressed(self) -> bool:
        return (self.attributes & COMPRESSION_CODEC_MASK) != 0

    @property
    def timestamp_type(self) -> TimestampType:
        if self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control_batch(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG_MASK)

    @property
    def base_timestamp(self) -> int:
        return _unpack_i64(self._buffer, BASE_TIMESTAMP_OFFSET)[0]

    @property
    def max_timestamp(self) -> int:
        return _unpack_i64(self._buffer, MAX_TIMESTAMP_OFFSET)[0]

    @property
    def producer_id(self) -> int:
        return _unpack_i64(self._buffer, PRODUCER_ID_OFFSET)[0]

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def producer_epoch(self) -> int:
        return _unpack_i16(self._buffer, PRODUCER_EPOCH_OFFSET)[0]

    @property
    def base_sequence(self) -> int:
        return _unpack_i32(self._buffer, BASE_SEQUENCE_OFFSET)[0]

    @property
    def last_sequence(self) -> int:
        base = self.base_sequence
        if base == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(base, self.last_offset_delta)

    @property
    def record_count(self) -> int:
        return _unpack_i32(self._buffer, RECORDS_COUNT_OFFSET)[0]

    def header(self) -> tuple:
        """All 13 header fields in layout order, decoded with one struct call."""
        return _HEADER.unpack_from(self._buffer, 0)

    # ---- validation ----------------------------------------------------------
    def compute_checksum(self) -> int:
        return crc32c(self._buffer[ATTRIBUTES_OFFSET:])

    def _validation_error(self, header_checks: bool = True) -> Optional[Exception]:
        buf = self._buffer
        magic = self.magic
        if magic != CURRENT_MAGIC_VALUE:
            if magic in (MAGIC_VALUE_V0, MAGIC_VALUE_V1):
                return UnsupportedForMessageFormatException(
                    f"Record batch has magic v{magic} (legacy message format); "
                    f"only magic v{CURRENT_MAGIC_VALUE} batches are supported"
                )
            return CorruptRecordException(f"Invalid magic found in record batch: {magic}")
        length = _unpack_i32(buf, LENGTH_OFFSET)[0]
        size = LOG_OVERHEAD + length
        if size < RECORD_BATCH_OVERHEAD:
            return CorruptRecordException(
                f"Record batch is corrupt (the size {size} is smaller than the minimum "
                f"allowed overhead {RECORD_BATCH_OVERHEAD})"
            )
        if size != len(buf):
            return CorruptRecordException(
                f"Record batch is corrupt (length field {length} gives a batch of {size} "
                f"bytes but the buffer holds {len(buf)})"
            )
        stored = _unpack_u32(buf, CRC_OFFSET)[0]
        computed = crc32c(buf[ATTRIBUTES_OFFSET:])
        if stored != computed:
            return CorruptRecordException(
                f"Record is corrupt (stored crc = {stored}, computed crc = {computed})"
            )
        if not header_checks:
            return None
        count = _unpack_i32(buf, RECORDS_COUNT_OFFSET)[0]
        if count < 0:
            return InvalidRecordException(f"Found invalid record count {count} in magic v2 batch")
        last_offset_delta = _unpack_i32(buf, LAST_OFFSET_DELTA_OFFSET)[0]
        if last_offset_delta < 0:
            return InvalidRecordException(f"Found invalid last offset delta {last_offset_delta} in magic v2 batch")
        # Offset deltas of a batch's records are distinct and within
        # [0, lastOffsetDelta], so a batch (even a compacted one) can never hold
        # more records than that range.
        if count > last_offset_delta + 1:
            return InvalidRecordException(
                f"Record count {count} does not fit the batch's offset range "
                f"(last offset delta {last_offset_delta})"
            )
        if not (self.attributes & COMPRESSION_CODEC_MASK) and count * MIN_RECORD_SIZE > size - RECORD_BATCH_OVERHEAD:
            return InvalidRecordException(
                f"Record count {count} cannot fit in {size - RECORD_BATCH_OVERHEAD} bytes of records"
            )
        return None

    def is_valid(self) -> bool:
        """Integrity as Kafka's isValid: magic 2, sizes, and the CRC.

        The header consistency checks of ensure_valid() (record count against
        the offset range) are left out, so a CRC-intact batch with an
        inconsistent count can still be rejected with INVALID_RECORD rather
        than CORRUPT_MESSAGE, as Kafka's LogValidator does.
        """
        return self._validation_error(header_checks=False) is None

    def ensure_valid(self) -> None:
        """Raise CorruptRecordException (magic, size, length, CRC) or
        InvalidRecordException (record count against the offset range), naming the problem."""
        err = self._validation_error()
        if err is not None:
            raise err

    # ---- in-place updates (the buffer must be writable) ------------------------
    def set_last_offset(self, offset: int) -> None:
        _I64.pack_into(self._buffer, BASE_OFFSET_OFFSET, offset - self.last_offset_delta)

    def set_partition_leader_epoch(self, epoch: int) -> None:
        _I32.pack_into(self._buffer, PARTITION_LEADER_EPOCH_OFFSET, epoch)

    def set_max_timestamp(self, timestamp_type: TimestampType | int, max_timestamp: int) -> None:
        if self.timestamp_type == timestamp_type and self.max_timestamp == max_timestamp:
            return  # nothing changes, so the CRC stays valid
        attributes = self.attributes
        new_attributes = compute_attributes(
            attributes & COMPRESSION_CODEC_MASK,
            timestamp_type,
            bool(attributes & TRANSACTIONAL_FLAG_MASK),
            bool(attributes & CONTROL_FLAG_MASK),
        )
        buf = self._buffer
        _I16.pack_into(buf, ATTRIBUTES_OFFSET, new_attributes)
        _I64.pack_into(buf, MAX_TIMESTAMP_OFFSET, max_timestamp)
        _U32.pack_into(buf, CRC_OFFSET, crc32c(buf[ATTRIBUTES_OFFSET:]))

    # ---- records -------------------------------------------------------------
    def __iter__(self) -> Iterator[Record]:
        return self.records()

    def records(self, max_decompressed_size: Optional[int] = None) -> Iterator[Record]:
        """Decode the records; CorruptRecordException / InvalidRecordException on malformed data."""
        buf = self._buffer
        (base_offset, length, _ple, magic, _crc, attributes, _lod, base_ts, max_ts,
         _pid, _epoch, base_seq, count) = _HEADER.unpack_from(buf, 0)
        if magic != CURRENT_MAGIC_VALUE:
            raise CorruptRecordException(f"Cannot read records of a batch with magic {magic}")
        if count < 0:
            raise InvalidRecordException(f"Found invalid record count {count} in magic v2 batch")
        size = LOG_OVERHEAD + length
        if size < RECORD_BATCH_OVERHEAD or size > len(buf):
            raise CorruptRecordException(
                f"Record batch length field gives {size} bytes but the buffer holds {len(buf)}"
            )
        body = buf[RECORDS_OFFSET:size]
        codec = attributes & COMPRESSION_CODEC_MASK
        if codec:
            try:
                ctype = CompressionType(codec)
            except ValueError:
                raise CorruptRecordException(f"Unknown compression type id {codec} in batch attributes") from None
            if max_decompressed_size is None:
                data = decompress(ctype, body)
            else:
                data = decompress(ctype, body, max_decompressed_size)
        else:
            data = bytes(body)
        return self.records_from(data)

    def records_from(self, data) -> Iterator[Record]:
        """Decode this batch's records from ``data``, its record bytes already decompressed
        (the validator decompresses once, to walk the records, and decodes from that)."""
        (base_offset, _length, _ple, _magic, _crc, attributes, _lod, base_ts, max_ts,
         _pid, _epoch, base_seq, count) = _HEADER.unpack_from(self._buffer, 0)
        log_append_time = max_ts if attributes & TIMESTAMP_TYPE_MASK else None
        if not isinstance(data, bytes):
            data = bytes(data)  # keys and values are handed out as bytes
        return _read_records(data, count, base_offset, base_ts, log_append_time, base_seq)

    def __eq__(self, other) -> bool:
        return isinstance(other, DefaultRecordBatch) and self._buffer == other._buffer

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        try:
            return (
                f"RecordBatch(magic={self.magic}, offsets=[{self.base_offset}, {self.last_offset}], "
                f"sequence=[{self.base_sequence}, {self.last_sequence}], "
                f"isTransactional={self.is_transactional}, isControlBatch={self.is_control_batch}, "
                f"compression={self.attributes & COMPRESSION_CODEC_MASK}, "
                f"timestampType={self.timestamp_type}, crc={self.checksum})"
            )
        except Exception:  # noqa: BLE001 - repr of a corrupt view must not raise
            return f"RecordBatch(<{len(self._buffer)} bytes>)"


# ---- record decoding -----------------------------------------------------------

def _invalid(msg: str) -> InvalidRecordException:
    return InvalidRecordException(msg)


def _read_varint(data: bytes, pos: int, end: int, max_bytes: int) -> tuple[int, int]:
    """Zig-zag varint at ``pos``; the value and the position after it."""
    if pos < end:
        b = data[pos]
        if b < 0x80:
            return (b >> 1) ^ -(b & 1), pos + 1
    raw = 0
    shift = 0
    limit = min(end, pos + max_bytes)
    while True:
        if pos >= limit:
            if pos >= end:
                raise _invalid("Found invalid record structure: varint runs past the end of the data")
            raise _invalid(f"Varint is longer than {max_bytes} bytes")
        b = data[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    return (raw >> 1) ^ -(raw & 1), pos


def _read_records(
    data: bytes,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: Optional[int],
    base_sequence: int,
) -> Iterator[Record]:
    end = len(data)
    if count * MIN_RECORD_SIZE > end:
        raise InvalidRecordException(
            f"Record count {count} cannot fit in {end} bytes of record data"
        )
    pos = 0
    read_varint = _read_varint
    for _ in range(count):
        size, pos = read_varint(data, pos, end, 5)
        rec_end = pos + size
        if size < 6 or rec_end > end:
            raise _invalid(f"Invalid record size {size} with {end - pos} bytes of record data left")
        pos += 1  # attributes: unused in v2
        ts_delta, pos = read_varint(data, pos, rec_end, 10)
        offset_delta, pos = read_varint(data, pos, rec_end, 5)
        key_len, pos = read_varint(data, pos, rec_end, 5)
        if key_len < 0:
            if key_len != -1:
                raise _invalid(f"Invalid key length {key_len}")
            key = None
        else:
            if pos + key_len > rec_end:
                raise _invalid(f"Key of {key_len} bytes runs past the end of the record")
            key = data[pos:pos + key_len]
            pos += key_len
        value_len, pos = read_varint(data, pos, rec_end, 5)
        if value_len < 0:
            if value_len != -1:
                raise _invalid(f"Invalid value length {value_len}")
            value = None
        else:
            if pos + value_len > rec_end:
                raise _invalid(f"Value of {value_len} bytes runs past the end of the record")
            value = data[pos:pos + value_len]
            pos += value_len
        num_headers, pos = read_varint(data, pos, rec_end, 5)
        if num_headers < 0:
            raise _invalid(f"Found invalid number of record headers {num_headers}")
        if num_headers:
            if num_headers * 2 > rec_end - pos:
                raise _invalid(f"{num_headers} record headers cannot fit in the record")
            headers = []
            for _h in range(num_headers):
                hk_len, pos = read_varint(data, pos, rec_end, 5)
                if hk_len < 0:
                    raise _invalid(f"Invalid negative header key size {hk_len}")
                if pos + hk_len > rec_end:
                    raise _invalid("Header key runs past the end of the record")
                # Java decodes header keys leniently (malformed UTF-8 becomes U+FFFD).
                hkey = data[pos:pos + hk_len].decode("utf-8", "replace")
                pos += hk_len
                hv_len, pos = read_varint(data, pos, rec_end, 5)
                if hv_len < 0:
                    if hv_len != -1:
                        raise _invalid(f"Invalid header value length {hv_len}")
                    hval = None
                else:
                    if pos + hv_len > rec_end:
                        raise _invalid("Header value runs past the end of the record")
                    hval = data[pos:pos + hv_len]
                    pos += hv_len
                headers.append((hkey, hval))
            headers_t = tuple(headers)
        else:
            headers_t = ()
        if pos != rec_end:
            raise _invalid(
                f"Invalid record size: expected to read {size} bytes in record payload, "
                f"but instead read {size - (rec_end - pos)}"
            )
        yield Record(
            base_offset + offset_delta,
            log_append_time if log_append_time is not None else base_timestamp + ts_delta,
            key,
            value,
            headers_t,
            increment_sequence(base_sequence, offset_delta) if base_sequence >= 0 else NO_SEQUENCE,
        )
    if pos != end:
        raise InvalidRecordException("Incorrect declared batch size, records still remaining in file")


# ---- record encoding -------------------------------------------------------------

def _zigzag(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def write_varint(out: bytearray, value: int) -> None:
    """Append ``value`` as a zig-zag varint (also used for varlongs)."""
    v = (value << 1) ^ (value >> 63)
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def size_of_varint(value: int) -> int:
    v = _zigzag(value)
    n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n


def _bytes_or_none(name: str, value) -> Optional[bytes]:
    if value is None or isinstance(value, (bytes, bytearray, memoryview)):
        return value
    raise TypeError(f"Record {name} must be bytes-like or None, not {type(value).__name__}")


def _encode_header_key(key) -> bytes:
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    raise TypeError(f"Header key must be str, not {type(key).__name__}")


def record_size_in_bytes(offset_delta: int, timestamp_delta: int, key, value, headers=()) -> int:
    """Bytes the record takes in a batch, including its length varint."""
    body = 1 + size_of_varint(offset_delta) + size_of_varint(timestamp_delta)
    body += _size_of_bytes(key) + _size_of_bytes(value)
    body += size_of_varint(len(headers))
    for hk, hv in headers:
        hk_b = _encode_header_key(hk)
        body += size_of_varint(len(hk_b)) + len(hk_b) + _size_of_bytes(hv)
    return size_of_varint(body) + body


def _size_of_bytes(b) -> int:
    if b is None:
        return 1
    n = len(b)
    return size_of_varint(n) + n


def write_record(out: bytearray, offset_delta: int, timestamp_delta: int, key, value, headers=()) -> int:
    """Append one record (DefaultRecord.writeTo); returns the bytes written."""
    key = _bytes_or_none("key", key)
    value = _bytes_or_none("value", value)
    body = bytearray(b"\x00")  # attributes
    write_varint(body, timestamp_delta)
    write_varint(body, offset_delta)
    if key is None:
        body.append(1)  # zig-zag(-1)
    else:
        write_varint(body, len(key))
        body += key
    if value is None:
        body.append(1)
    else:
        write_varint(body, len(value))
        body += value
    write_varint(body, len(headers))
    for hk, hv in headers:
        hk_b = _encode_header_key(hk)
        write_varint(body, len(hk_b))
        body += hk_b
        hv = _bytes_or_none("header value", hv)
        if hv is None:
            body.append(1)
        else:
            write_varint(body, len(hv))
            body += hv
    before = len(out)
    write_varint(out, len(body))
    out += body
    return len(out) - before


def assemble_batch(
    records_data,
    *,
    base_offset: int,
    last_offset_delta: int,
    record_count: int,
    base_timestamp: int,
    max_timestamp: int,
    compression: CompressionType | int = CompressionType.NONE,
    timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
    is_control_batch: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """Compress encoded records (DefaultRecordBatch.writeHeader + the records) into one batch."""
    compression = CompressionType(compression)
    payload = compress(compression, records_data) if compression else records_data
    attributes = compute_attributes(compression, timestamp_type, is_transactional, is_control_batch)
    tail = _HEADER_AFTER_CRC.pack(
        attributes, last_offset_delta, base_timestamp, max_timestamp,
        producer_id, producer_epoch, base_sequence, record_count,
    )
    crc = crc32c(payload, crc32c(tail))
    length = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(payload)
    head = struct.pack(">qiibI", base_offset, length, partition_leader_epoch, CURRENT_MAGIC_VALUE, crc)
    return b"".join((head, tail, payload))


def build_batch(
    records: Iterable[SimpleRecord],
    *,
    base_offset: int = 0,
    compression: CompressionType | int = CompressionType.NONE,
    timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
    is_control_batch: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    log_append_time: Optional[int] = None,
    offsets: Optional[Sequence[int]] = None,
) -> bytes:
    """Encode one v2 batch of ``records`` (at least one).

    Records get offsets ``base_offset, base_offset + 1, ...`` unless ``offsets``
    gives their absolute offsets (increasing, >= base_offset), as the log
    cleaner's retained records keep theirs. With LOG_APPEND_TIME the batch's max
    timestamp is ``log_append_time`` (default: the largest record timestamp).
    """
    recs = list(records)
    if not recs:
        raise ValueError("A record batch needs at least one record")
    if offsets is not None and len(offsets) != len(recs):
        raise ValueError(f"{len(offsets)} offsets given for {len(recs)} records")
    if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
        raise ValueError("Magic v2 batches need CREATE_TIME or LOG_APPEND_TIME")
    if is_transactional and producer_id == NO_PRODUCER_ID:
        raise ValueError("Cannot write transactional messages without a valid producer ID")
    first_ts = recs[0].timestamp
    max_ts = NO_TIMESTAMP
    body = bytearray()
    last_delta = -1
    for i, r in enumerate(recs):
        delta = i if offsets is None else offsets[i] - base_offset
        if delta <= last_delta or delta > INT_MAX:
            raise ValueError(
                f"Illegal offset {base_offset + delta} following previous offset "
                f"{base_offset + last_delta} (offsets must increase within the batch's range)"
            )
        last_delta = delta
        ts = r.timestamp
        if ts < 0 and ts != NO_TIMESTAMP:
            raise ValueError(f"Invalid negative timestamp {ts}")
        write_record(body, delta, ts - first_ts, r.key, r.value, r.headers)
        if ts > max_ts:
            max_ts = ts
    if timestamp_type == TimestampType.LOG_APPEND_TIME and log_append_time is not None:
        max_ts = log_append_time
    return assemble_batch(
        body,
        base_offset=base_offset,
        last_offset_delta=last_delta,
        record_count=len(recs),
        base_timestamp=first_ts,
        max_timestamp=max_ts,
        compression=compression,
        timestamp_type=timestamp_type,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        is_transactional=is_transactional,
        is_control_batch=is_control_batch,
        partition_leader_epoch=partition_leader_epoch,
    )


def build_empty_batch(
    *,
    base_offset: int,
    last_offset: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    timestamp: int,
    is_transactional: bool,
    is_control_batch: bool,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
) -> bytes:
    """A batch with no records that keeps producer state (DefaultRecordBatch.writeEmptyHeader).

    The log cleaner writes these when it removes every record of a batch whose
    producer metadata must survive.
    """
    return assemble_batch(
        b"",
        base_offset=base_offset,
        last_offset_delta=last_offset - base_offset,
        record_count=0,
        base_timestamp=timestamp,
        max_timestamp=timestamp,
        timestamp_type=timestamp_type,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        is_transactional=is_transactional,
        is_control_batch=is_control_batch,
        partition_leader_epoch=partition_leader_epoch,
    )


def estimate_batch_size_upper_bound(key, value, headers=()) -> int:
    """Upper bound of a one-record batch's size (DefaultRecordBatch.estimateBatchSizeUpperBound)."""
    return RECORD_BATCH_OVERHEAD + MAX_RECORD_OVERHEAD + record_size_in_bytes(0, 0, key, value, headers)
