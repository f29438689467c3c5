"""Port of clients/src/main/java/org/apache/kafka/common/record/RecordsUtil.java and
ConvertedRecords.java (Kafka 2.8.2): down-conversion of record batches to an older message
format, for the consumers of Fetch v0-v3.

``down_convert`` turns a run of batches into log entries of message format 0 or 1, as
RecordsUtil.downConvert does:

* a batch already at or below the target format is copied as it is;
* a control batch (transaction markers) is dropped: the old formats cannot say what it is;
* a batch compressed with zstd raises UnsupportedCompressionTypeException: the old formats
  have no codec id for it;
* any other v2 batch keeps its codec: an uncompressed one becomes one entry per record, a
  compressed one a single wrapper over its records (inner offsets relative in format 1,
  absolute in format 0; the wrapper at the last offset). Producer ids, epochs, sequences,
  the transactional flag and record headers have no place in the old formats and are left
  behind; timestamps go too when the target is format 0. Records of an *uncompressed*
  batch below ``first_offset`` are left out, as Kafka does (some librdkafka versions rely on
  it); a compressed batch is converted whole.

Aborted transactions' records are converted like any others: an old consumer has no
isolation level and reads them, as it does from Kafka.

The step that runs for every record, from a v2 record's varints to a legacy message with its
CRC-32, also exists in C (``_records_util.c``, built by setup.py): in Python it costs about
15 microseconds a record, which would make an old consumer of small records read at a few
MB/s. The C step returns the same bytes, or None for records it finds malformed; the Python
step then runs to name the fault, so the messages live in one place. ``down_convert_buffer``
(the lazy send's entry) hands C whole runs of uncompressed batches at once, so that a chunk
of 16 KiB batches costs one call, not one per batch.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

from kafka_py.clients.common.errors import CorruptRecordException, UnsupportedCompressionTypeException
from kafka_py.clients.common.record.abstract_legacy_record_batch import (
    LegacyEntry,
    LegacyRecordBatch,
    build_legacy_records,
    compress_legacy,
)
from kafka_py.clients.common.record.compression import CompressionType, decompress
from kafka_py.clients.common.record.default_record_batch import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CURRENT_MAGIC_VALUE,
    HEADER_SIZE_UP_TO_MAGIC,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V1,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    RECORD_OVERHEAD_V0,
    RECORDS_OFFSET,
    TIMESTAMP_TYPE_MASK,
    DefaultRecordBatch,
    TimestampType,
    as_byte_view,
)
from kafka_py.clients.common.record.legacy_record import compute_attributes, write_entry
from kafka_py.clients.common.record.record_conversion_stats import RecordConversionStats
from kafka_py.core.utils.java_limits import LONG_MIN
from kafka_py.clients.common.utils.time import Time

try:  # the per-record step in C (_records_util.c), built by setup.py
    from kafka_py.clients.common.record import _records_util as _compiled
except ImportError:  # pragma: no cover - a checkout whose extension was not built
    _compiled = None

_ZSTD_ID = CompressionType.ZSTD.id
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


@dataclass(frozen=True, slots=True)
class ConvertedRecords:
    """ConvertedRecords.java: converted log entries and what converting them cost."""

    records: bytes
    record_conversion_stats: RecordConversionStats

    def size_in_bytes(self) -> int:
        return len(self.records)


def down_convert(batches: Iterable, to_magic: int, first_offset: int, time: Time = Time.SYSTEM) -> ConvertedRecords:
    """RecordsUtil.downConvert to message format ``to_magic`` (0 or 1); see the module
    docstring. The stats count the records converted, the bytes held meanwhile (each batch
    read, and each compressed batch's records decompressed) and the time taken."""
    start = time.nanoseconds()
    pieces: list = []
    converted = 0
    temporary_memory_bytes = 0
    for batch in batches:
        if type(batch) is DefaultRecordBatch:
            # the common case, read from one unpacking of the header
            header = batch.header()
            attributes = header[5]
            if attributes & CONTROL_FLAG_MASK:
                continue
            if attributes & COMPRESSION_CODEC_MASK == _ZSTD_ID:
                raise UnsupportedCompressionTypeException("Down-conversion of zstandard-compressed batches "
                                                          "is not supported")
            temporary_memory_bytes += LOG_OVERHEAD + header[1]
            count, uncompressed = _convert_batch(batch, header, to_magic, first_offset, pieces)
            converted += count
            temporary_memory_bytes += uncompressed
            continue
        if batch.is_control_batch:
            continue
        if batch.compression_type is CompressionType.ZSTD:
            raise UnsupportedCompressionTypeException("Down-conversion of zstandard-compressed batches "
                                                      "is not supported")
        temporary_memory_bytes += batch.size_in_bytes
        if batch.magic <= to_magic:
            pieces.append(batch.buffer)
        else:
            # a format 1 entry read by a format 0 consumer
            converted += _convert_legacy_batch(batch, to_magic, pieces)
    stats = RecordConversionStats(temporary_memory_bytes, converted, time.nanoseconds() - start)
    return ConvertedRecords(b"".join(pieces), stats)


def down_convert_buffer(buffer, to_magic: int, first_offset: int,
                        time: Time = Time.SYSTEM) -> tuple[ConvertedRecords, int]:
    """``down_convert`` of the whole batches at the start of a buffer of log entries (of any
    format; a partial batch at its end is left), giving the same bytes, and how many bytes of
    the buffer those batches are: runs of uncompressed v2 batches (and control batches,
    dropped) converted by one compiled call each, every other batch by ``down_convert``."""
    view = as_byte_view(buffer)
    if _compiled is None:
        batches = list(batches_of(view))
        return (down_convert(batches, to_magic, first_offset, time),
                sum(batch.size_in_bytes for batch in batches))
    start = time.nanoseconds()
    pieces: list = []
    converted = 0
    temporary_memory_bytes = 0
    position = 0
    end = len(view)
    while position < end:
        entries, consumed, count = _compiled.convert_batches(view[position:] if position else view, to_magic,
                                                             first_offset)
        if consumed:
            pieces.append(entries)
            converted += count
            temporary_memory_bytes += consumed
            position += consumed
            if position == end:
                break
        rest = end - position
        if rest < HEADER_SIZE_UP_TO_MAGIC or LOG_OVERHEAD + _I32.unpack_from(view, position + LENGTH_OFFSET)[0] > rest:
            break  # a partial batch, where a window of the log ends: the end of the whole batches
        # a whole batch the compiled step leaves here: compressed, of an older format, or
        # unreadable (batches_of raises naming the fault)
        batch = next(batches_of(view[position:]))
        other = down_convert((batch,), to_magic, first_offset, time)
        pieces.append(other.records)
        converted += other.record_conversion_stats.num_records_converted
        temporary_memory_bytes += other.record_conversion_stats.temporary_memory_bytes
        position += batch.size_in_bytes
    stats = RecordConversionStats(temporary_memory_bytes, converted, time.nanoseconds() - start)
    return ConvertedRecords(b"".join(pieces), stats), position


@dataclass(frozen=True, slots=True)
class EntryScan:
    """What ``scan_entries`` found: the bytes and number of the whole log entries walked, the
    highest magic among them and the offset field of the last (-1 for both when none)."""

    size_in_bytes: int
    entries: int
    max_magic: int
    last_offset: int


def scan_entries(buffer, stop_above_magic: int = CURRENT_MAGIC_VALUE) -> EntryScan:
    """The whole log entries at the start of ``buffer``, walked by their headers alone (the
    offset, the length, and the magic at byte 16, where every format has it), as a format 0/1
    consumer steps through the messages of an answer and as Records.hasCompatibleMagic goes
    through the batches of a fetch. The walk stops at a partial entry (where a read was cut)
    and after the first entry whose magic is above ``stop_above_magic``. An entry shorter than
    a v0 message raises CorruptRecordException. Compiled in ``_records_util.c`` (a consumer
    of 100-byte messages steps through ~6,700 a MB); this is the fallback and the reference."""
    if _compiled is not None:
        size, entries, max_magic, last_offset, corrupt = _compiled.scan_entries(buffer, stop_above_magic)
    else:
        size, entries, max_magic, last_offset, corrupt = _scan_entries(as_byte_view(buffer), stop_above_magic)
    if corrupt:
        raise CorruptRecordException(f"Found record size smaller than minimum record overhead "
                                     f"({RECORD_OVERHEAD_V0}) at position {size}")
    return EntryScan(size, entries, max_magic, last_offset)


def _scan_entries(view: memoryview, stop_above_magic: int) -> tuple[int, int, int, int, bool]:
    position = entries = 0
    end = len(view)
    max_magic = last = -1
    while end - position >= HEADER_SIZE_UP_TO_MAGIC:
        length = _I32.unpack_from(view, position + LENGTH_OFFSET)[0]
        if length < RECORD_OVERHEAD_V0:
            return position, entries, max_magic, -1 if last < 0 else _I64.unpack_from(view, last)[0], True
        if position + LOG_OVERHEAD + length > end:
            break
        magic = view[position + MAGIC_OFFSET]
        max_magic = max(max_magic, magic)
        last = position
        entries += 1
        position += LOG_OVERHEAD + length
        if magic > stop_above_magic:
            break
    return position, entries, max_magic, -1 if last < 0 else _I64.unpack_from(view, last)[0], False


def batches_of(view: memoryview) -> Iterator:
    """The whole batches of ``view``, a buffer of log entries: DefaultRecordBatch for format 2,
    LegacyRecordBatch for formats 0 and 1 (told apart by the magic each entry has at byte 16)."""
    position = 0
    end = len(view)
    while end - position >= HEADER_SIZE_UP_TO_MAGIC:
        size = LOG_OVERHEAD + _I32.unpack_from(view, position + LENGTH_OFFSET)[0]
        if size < LOG_OVERHEAD + RECORD_OVERHEAD_V0:
            raise CorruptRecordException(f"Found record size {size - LOG_OVERHEAD} smaller than minimum record "
                                         f"overhead ({RECORD_OVERHEAD_V0}) at position {position}")
        if position + size > end:
            return
        magic = view[position + MAGIC_OFFSET]
        entry = view[position:position + size]
        if magic == CURRENT_MAGIC_VALUE:
            if size < RECORD_BATCH_OVERHEAD:
                raise CorruptRecordException(f"Record batch at position {position} is smaller than its header "
                                             f"({size} bytes)")
            yield DefaultRecordBatch(entry)
        elif magic < CURRENT_MAGIC_VALUE:
            yield LegacyRecordBatch(entry)
        else:
            raise CorruptRecordException(f"Invalid magic {magic} at position {position}")
        position += size


def _convert_batch(batch: DefaultRecordBatch, header: tuple, to_magic: int, first_offset: int,
                   pieces: list) -> tuple[int, int]:
    """One v2 batch (``header``: its unpacked header) appended to ``pieces`` as legacy entries
    (RecordsUtil.convertRecordBatch and the legacy half of MemoryRecordsBuilder); (records
    converted, decompressed bytes held)."""
    (base_offset, length, _epoch, _magic, _crc, attributes, _last_offset_delta, base_timestamp, max_timestamp,
     _producer_id, _producer_epoch, _base_sequence, count) = header
    codec = attributes & COMPRESSION_CODEC_MASK
    log_append = bool(attributes & TIMESTAMP_TYPE_MASK)
    timestamp_type = TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME
    log_append_time = max_timestamp if log_append else None
    body = batch.buffer[RECORDS_OFFSET:LOG_OVERHEAD + length]
    if not codec:
        entries, written, _max, _last = convert_records(batch, body, count, base_offset, base_timestamp, to_magic,
                                                        timestamp_type, log_append_time, False, first_offset)
        pieces.append(entries)
        return written, 0
    compression = CompressionType.for_id(codec)
    data = decompress(compression, body)
    # Inner offsets of a format 1 wrapper count from its first record; format 0 keeps them absolute.
    inner, written, inner_max_timestamp, last_offset = convert_records(
        batch, data, count, base_offset, base_timestamp, to_magic, timestamp_type, log_append_time,
        to_magic == MAGIC_VALUE_V1, LONG_MIN)
    if written:
        wrapper = bytearray()
        write_entry(wrapper, last_offset, to_magic,
                    log_append_time if log_append_time is not None else inner_max_timestamp,
                    None, compress_legacy(compression, inner, to_magic), compression, timestamp_type)
        pieces.append(wrapper)
    return written, len(data)


def _convert_legacy_batch(batch, to_magic: int, pieces: list) -> int:
    """A legacy entry of a newer legacy format, converted record by record, keeping its codec."""
    records = batch.records()
    pieces.append(build_legacy_records(
        (LegacyEntry(r.offset, r.timestamp, r.key, r.value) for r in records), to_magic, batch.compression_type,
        batch.timestamp_type,
        batch.max_timestamp if batch.timestamp_type == TimestampType.LOG_APPEND_TIME else NO_TIMESTAMP))
    return len(records)


def convert_records(batch: DefaultRecordBatch, data, count: int, base_offset: int, base_timestamp: int,
                    to_magic: int, timestamp_type: TimestampType, log_append_time: Optional[int],
                    relative: bool, first_offset: int) -> tuple[bytes, int, int, int]:
    """The records of ``batch`` (``data``: its record bytes, decompressed; the other arguments
    from its header) as log entries of format ``to_magic`` with no codec: (entries, records
    written, largest timestamp, last offset written). Records below ``first_offset`` are left
    out; with ``relative`` an entry's offset counts from the first record written. Each
    message's attributes carry the batch's timestamp type (format 1), its timestamp the
    batch's append time when it has one."""
    if _compiled is not None:
        result = _compiled.convert(data, count, base_offset, base_timestamp, to_magic,
                                   compute_attributes(to_magic, CompressionType.NONE, timestamp_type),
                                   log_append_time is not None,
                                   NO_TIMESTAMP if log_append_time is None else log_append_time, relative,
                                   first_offset)
        if result is not None:
            return result
    return _convert_records(batch, data, to_magic, relative, first_offset)


def _convert_records(batch: DefaultRecordBatch, data, to_magic: int, relative: bool,
                     first_offset: int) -> tuple[bytes, int, int, int]:
    """``convert_records`` in Python: the reference the C step must equal, and the one that
    raises InvalidRecordException for malformed records."""
    timestamp_type = batch.timestamp_type
    out = bytearray()
    count = 0
    max_timestamp = NO_TIMESTAMP
    last_offset = -1
    origin: Optional[int] = None
    for record in batch.records_from(data):
        if record.offset < first_offset:
            continue
        if origin is None:
            origin = record.offset if relative else 0
        write_entry(out, record.offset - origin, to_magic, record.timestamp, record.key, record.value,
                    CompressionType.NONE, timestamp_type)
        count += 1
        max_timestamp = max(max_timestamp, record.timestamp)
        last_offset = record.offset
    return bytes(out), count, max_timestamp, last_offset


__all__ = ["ConvertedRecords", "EntryScan", "batches_of", "convert_records", "down_convert", "down_convert_buffer",
           "scan_entries"]
