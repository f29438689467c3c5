"""Fuzz target: a produced record batch appended by a partition leader, the path of every
Produce request's records: Log.append_as_leader (its batch checks, LogValidator with the
record walk, producer state) into a real log in a temporary directory.

The first input byte picks the topic's configuration (compacted or not, CreateTime or
LogAppendTime, compression.type, a message.timestamp.difference.max.ms or none); the rest is
the records field as a client sends it, of any magic and codec.

Contract: the append succeeds, or it raises an ApiException whose error code is not
UNKNOWN_SERVER_ERROR (CORRUPT_MESSAGE, INVALID_RECORD, INVALID_TIMESTAMP,
UNSUPPORTED_FOR_MESSAGE_FORMAT, OUT_OF_ORDER_SEQUENCE_NUMBER, ...), which the client is
told. What was appended must read back: every batch between the old and the new log end
passes its CRC and every record of it decodes.
"""
from __future__ import annotations

import shutil
from typing import Iterable

from tests.fuzz.harness import scratch_dir

from kafka_py.clients.common.errors import ApiException
from kafka_py.log.log import Log
from kafka_py.log.log_config import LogConfig
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import TimestampType
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.utils.time import MockTime

_NOW_MS = 1_700_000_000_000
_CODECS = ("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")
_ROOT = scratch_dir("produce")
_logs: dict[int, Log] = {}
# A fresh log now and then keeps the segment (and the test's disk use) small.
_APPENDS_PER_LOG = 2000
_appends = [0]


def _log_for(config_byte: int) -> Log:
    key = config_byte & 0x3F
    log = _logs.get(key)
    _appends[0] += 1
    if log is not None and _appends[0] % _APPENDS_PER_LOG == 0:
        log.close()
        shutil.rmtree(log.dir, ignore_errors=True)
        log = None
    if log is None:
        config = LogConfig(
            cleanup_policy=("compact",) if key & 1 else ("delete",),
            message_timestamp_type=TimestampType.LOG_APPEND_TIME if key & 2 else TimestampType.CREATE_TIME,
            compression_type=_CODECS[(key >> 2) % len(_CODECS)],
            message_timestamp_difference_max_ms=3_600_000 if key & 32 else LogConfig().message_timestamp_difference_max_ms,
            retention_ms=-1)
        log = _logs[key] = Log(f"{_ROOT}/fuzz-{key}-{_appends[0]}", config, time=MockTime(_NOW_MS),
                               had_clean_shutdown=True, recovery_point=0)
    return log


def _validate_produce_records():
    # KafkaApis' check of a Produce request's records (ProduceRequest.validateRecords), imported
    # on first use: after the instrumented imports, so the rest of the broker it pulls in is
    # not instrumented (the target's coverage stays the records' path).
    from kafka_py.server.kafka_apis import _validate_produce_records as validate

    globals()["_validate_produce_records"] = lambda: validate
    return validate


def one_input(data: bytes) -> None:
    if not data:
        return
    log = _log_for(data[0])
    start = log.log_end_offset
    try:
        records = _validate_produce_records()(8, memoryview(bytearray(data[1:])))
        log.append_as_leader(records, leader_epoch=0)
    except ApiException as e:
        if Errors.for_exception(e) is Errors.UNKNOWN_SERVER_ERROR:
            raise
        if log.log_end_offset != start:
            raise AssertionError(f"refused ({e!r}) but the log end moved from {start} to {log.log_end_offset}")
        return
    # Everything appended reads back whole.
    records = log.read(start, 1 << 30).records
    memory = records if isinstance(records, MemoryRecords) else MemoryRecords(
        records.read_bytes(0, records.size_in_bytes()))
    for batch in memory.batches():
        batch.ensure_valid()
        for _ in batch.records():
            pass


def seeds() -> Iterable[tuple[str, bytes]]:
    from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch

    records = [SimpleRecord(b"key-1", b"value-1", _NOW_MS, headers=(("h", b"v"),)),
               SimpleRecord(None, b"value-2", _NOW_MS + 5),
               SimpleRecord(b"key-3", None, _NOW_MS - 5)]
    for codec in CompressionType:
        batch = build_batch(records, compression=codec)
        yield f"{codec.name.lower()}", bytes([0]) + batch
        yield f"{codec.name.lower()}-idempotent", bytes([0]) + build_batch(
            records, compression=codec, producer_id=7, producer_epoch=0, base_sequence=0)
        yield f"{codec.name.lower()}-transactional", bytes([0]) + build_batch(
            records, compression=codec, producer_id=8, producer_epoch=0, base_sequence=0, is_transactional=True)
    for config_byte in (1, 2, 4 * 2, 4 * 5, 32, 1 | 2 | 32):
        yield f"config-{config_byte}", bytes([config_byte]) + build_batch(records, compression=CompressionType.GZIP)
    # Legacy message formats (magic 0 and 1), which this broker refuses: one message each.
    yield "magic0", bytes([0]) + _legacy_message(0)
    yield "magic1", bytes([0]) + _legacy_message(1)
    # Regression: a base timestamp of Long.MAX_VALUE and a record delta of 1.
    yield "regress-timestamp-overflow", bytes([0]) + _timestamp_overflow_batch()
    # Regression: a negative timestamp in a batch the topic's codec makes the broker rebuild.
    yield "regress-negative-timestamp-rebuilt", bytes([4 * 2]) + _base_timestamp_batch(-5)


def _legacy_message(magic: int) -> bytes:
    import struct
    import zlib

    key, value = b"k", b"v"
    body = struct.pack(">bb", magic, 0) + (struct.pack(">q", _NOW_MS) if magic else b"")
    body += struct.pack(">i", len(key)) + key + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", 0, len(message)) + message


def _base_timestamp_batch(base_timestamp: int, max_timestamp: int | None = None) -> bytes:
    import struct

    import crc32c

    from kafka_py.clients.common.record.default_record_batch import (ATTRIBUTES_OFFSET, BASE_TIMESTAMP_OFFSET, CRC_OFFSET,
                                                      SimpleRecord, build_batch)

    batch = bytearray(build_batch([SimpleRecord(None, b"a", 1_000), SimpleRecord(None, b"b", 1_001)]))
    struct.pack_into(">qq", batch, BASE_TIMESTAMP_OFFSET, base_timestamp,
                     base_timestamp if max_timestamp is None else max_timestamp)
    struct.pack_into(">I", batch, CRC_OFFSET, crc32c.crc32c(bytes(batch[ATTRIBUTES_OFFSET:])))
    return bytes(batch)


def _timestamp_overflow_batch() -> bytes:
    from kafka_py.core.utils.java_limits import LONG_MAX

    return _base_timestamp_batch(LONG_MAX)
