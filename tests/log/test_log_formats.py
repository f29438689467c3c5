"""Logs of message format v0 and v1 (a topic's message.format.version below 0.11.0): what
the leader appends is stored in the log's format, read back through FileRecords and the
indexes, recovered after an unclean shutdown, replicated byte for byte, compacted, and
refused without a trace when bad. The segment files are read back with kafka-python's
decoder, an independent one."""
from __future__ import annotations

import os
import struct
import zlib

import pytest
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords as KpMemoryRecords

from kafka_py.clients.common.errors import (
    CorruptRecordException,
    InvalidRecordException,
    UnsupportedForMessageFormatException,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log import log_files
from kafka_py.log.cleaner_config import DOUBLE_MAX_VALUE
from kafka_py.log.log import Log
from kafka_py.log.log_cleaner import Cleaner, Throttler
from kafka_py.log.log_cleaner_manager import LogToClean
from kafka_py.log.log_config import LogConfig, api_version
from kafka_py.log.offset_map import SkimpyOffsetMap
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, TimestampType, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.utils.time import MockTime

TP = TopicPartition("legacy", 0)
NOW = 1_000_000
FORMATS = {0: "0.9.0", 1: "0.10.2"}


def open_log(tmp_path, magic: int, time=None, **kwargs) -> Log:
    kwargs.setdefault("message_format_version", api_version(FORMATS[magic]))
    return Log(str(tmp_path / str(TP)), LogConfig(**kwargs), time=time or MockTime(current_time_ms=NOW))


def v2(pairs, codec=CompressionType.NONE, ts=NOW - 10, **kwargs) -> MemoryRecords:
    return MemoryRecords(bytearray(build_batch([SimpleRecord(k, v, ts + i) for i, (k, v) in enumerate(pairs)],
                                               compression=codec, **kwargs)))


def old_producer(magic, pairs, codec=CompressionType.NONE, ts=NOW - 10) -> MemoryRecords:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=int(codec), batch_size=1 << 20)
    for i, (k, v) in enumerate(pairs):
        builder.append(i, timestamp=ts + i if magic else None, key=k, value=v)
    return MemoryRecords(bytearray(builder.build()))


def pairs(n, prefix=b""):
    return [(prefix + b"k%d" % i, prefix + b"v%d" % i) for i in range(n)]


def segment_bytes(log: Log) -> bytes:
    with open(log_files.log_file(log.dir, log.active_segment.base_offset), "rb") as f:
        return f.read()


def kafka_python_read(data: bytes):
    """(magic, [(offset, timestamp, key, value)]) per entry, CRCs checked by kafka-python."""
    out = []
    records = KpMemoryRecords(data)
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        out.append((batch.magic, [(r.offset, r.timestamp, r.key, r.value) for r in batch]))
    return out


def read_all(log: Log, start: int = 0):
    """(offset, timestamp, key, value) of every record, as a consumer sees them."""
    out = []
    offset = start
    while offset < log.log_end_offset:
        records = log.read(offset, 1 << 16, min_one_message=True).records
        memory = MemoryRecords(records.read_bytes(0, records.size_in_bytes()))
        next_offset = offset
        for batch in memory.batches(strict=False):
            out.extend((r.offset, r.timestamp, r.key, r.value) for r in batch.records() if r.offset >= offset)
            next_offset = batch.next_offset
        if next_offset == offset:
            break
        offset = next_offset
    return out


# ---------------------------------------------------------------------------- appends

@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP, CompressionType.LZ4])
@pytest.mark.parametrize("magic", [0, 1])
def test_a_current_producers_batches_are_stored_in_the_logs_format(tmp_path, magic, codec):
    log = open_log(tmp_path, magic)
    first = log.append_as_leader(v2(pairs(3), codec), leader_epoch=4)
    second = log.append_as_leader(v2(pairs(2, b"x"), codec), leader_epoch=4)
    assert (first.first_offset.message_offset, first.last_offset) == (0, 2)
    assert (second.first_offset.message_offset, second.last_offset) == (3, 4)
    assert log.log_end_offset == 5
    data = segment_bytes(log)
    entries = kafka_python_read(data)
    assert {m for m, _ in entries} == {magic}
    assert data[16] == magic  # the magic byte of the first entry on disk
    expected = [(i, k, v) for i, (k, v) in enumerate(pairs(3) + pairs(2, b"x"))]
    assert [(o, k, v) for _, rows in entries for o, _, k, v in rows] == expected
    assert [(o, k, v) for o, _, k, v in read_all(log)] == expected
    if magic == 1:
        assert [ts for o, ts, _, _ in read_all(log)] == [NOW - 10, NOW - 9, NOW - 8, NOW - 10, NOW - 9]
    # entries carry no leader epoch: a log of this format keeps no epoch cache
    assert log.leader_epoch_cache is None and log.latest_epoch is None
    assert not os.path.exists(os.path.join(log.dir, log_files.LEADER_EPOCH_CHECKPOINT_FILE))
    log.close()


@pytest.mark.parametrize("magic", [0, 1])
def test_old_producers_sets_are_stored_in_the_logs_format(tmp_path, magic):
    log = open_log(tmp_path, magic)
    for source in (0, 1):
        log.append_as_leader(old_producer(source, pairs(2, b"%d" % source)), leader_epoch=0)
        log.append_as_leader(old_producer(source, pairs(2, b"%dz" % source), CompressionType.SNAPPY),
                             leader_epoch=0)
    entries = kafka_python_read(segment_bytes(log))
    assert {m for m, _ in entries} == {magic}
    assert [o for _, rows in entries for o, *_ in rows] == list(range(8))
    log.close()


def test_index_and_time_index_find_offsets_and_timestamps_in_a_v1_log(tmp_path):
    log = open_log(tmp_path, 1, index_interval=1)
    for i in range(20):
        log.append_as_leader(v2(pairs(3, b"%d-" % i), CompressionType.GZIP if i % 2 else CompressionType.NONE,
                                ts=NOW + 100 * i), leader_epoch=0)
    assert log.log_end_offset == 60
    segment = log.active_segment
    assert segment.offset_index.entries > 0 and segment.time_index.entries > 0
    for target in (0, 7, 31, 59):
        records = log.read(target, 1 << 16).records
        first = next(MemoryRecords(records.read_bytes(0, records.size_in_bytes())).batches())
        assert first.last_offset >= target
    found = log.fetch_offset_by_timestamp(NOW + 100 * 12 + 1)
    assert (found.timestamp, found.offset) == (NOW + 1201, 37)
    log.close()


def test_timestamp_search_is_unsupported_in_a_v0_log(tmp_path):
    log = open_log(tmp_path, 0)
    log.append_as_leader(v2(pairs(2)), leader_epoch=0)
    with pytest.raises(UnsupportedForMessageFormatException, match="0.10.0-IV0"):
        log.fetch_offset_by_timestamp(NOW)
    assert log.fetch_offset_by_timestamp(-1).offset == 2  # LATEST still answers
    log.close()


def test_log_append_time_on_a_v1_log(tmp_path):
    time = MockTime(current_time_ms=NOW)
    log = open_log(tmp_path, 1, time=time, message_timestamp_type=TimestampType.LOG_APPEND_TIME)
    info = log.append_as_leader(v2(pairs(2), CompressionType.GZIP, ts=5), leader_epoch=0)
    assert info.log_append_time == NOW
    assert [ts for _, ts, _, _ in read_all(log)] == [NOW, NOW]
    log.close()


# ---------------------------------------------------------------------------- bad input

def _assert_nothing_appended(log: Log, before: bytes) -> None:
    assert log.log_end_offset == 2
    assert segment_bytes(log) == before


def test_bad_input_leaves_the_log_as_it_was(tmp_path):
    log = open_log(tmp_path, 1)
    log.append_as_leader(v2(pairs(2)), leader_epoch=0)
    before = segment_bytes(log)

    bad_crc = old_producer(1, pairs(2))
    bad_crc.buffer[-1] ^= 0xFF
    with pytest.raises(CorruptRecordException):
        log.append_as_leader(bad_crc, leader_epoch=0)
    _assert_nothing_appended(log, before)

    transactional = v2(pairs(2), producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True)
    with pytest.raises(UnsupportedForMessageFormatException, match="Transactional"):
        log.append_as_leader(transactional, leader_epoch=0)
    idempotent = v2(pairs(2), producer_id=7, producer_epoch=0, base_sequence=0)
    with pytest.raises(UnsupportedForMessageFormatException, match="Idempotent"):
        log.append_as_leader(idempotent, leader_epoch=0)
    _assert_nothing_appended(log, before)

    # a v1 wrapper claiming to end before its last inner message
    wrapper = old_producer(1, pairs(3), CompressionType.GZIP)
    struct.pack_into(">q", wrapper.buffer, 0, 1)
    with pytest.raises(InvalidRecordException):
        log.append_as_leader(wrapper, leader_epoch=0)
    _assert_nothing_appended(log, before)
    log.close()


# ---------------------------------------------------------------------------- recovery

@pytest.mark.parametrize("magic", [0, 1])
def test_recovery_rebuilds_the_indexes_and_cuts_a_torn_entry(tmp_path, magic):
    log = open_log(tmp_path, magic, index_interval=64)
    for i in range(30):
        codec = CompressionType.GZIP if i % 3 == 0 else CompressionType.NONE
        log.append_as_leader(v2(pairs(2, b"%d-" % i), codec, ts=NOW + i), leader_epoch=0)
    expected = read_all(log)
    path = log_files.log_file(log.dir, 0)
    log.close()
    good_size = os.path.getsize(path)
    # an unclean shutdown: no clean-shutdown marker, indexes gone, half an entry at the end
    os.remove(log_files.offset_index_file(log.dir, 0))
    os.remove(log_files.time_index_file(log.dir, 0))
    with open(path, "ab") as f:
        f.write(old_producer(magic, pairs(1)).buffer[:20])
    recovered = Log(log.dir, log.config, time=MockTime(current_time_ms=NOW), recovery_point=0)
    assert os.path.getsize(path) == good_size
    assert recovered.log_end_offset == 60
    assert read_all(recovered) == expected
    assert recovered.read(45, 100).records.size_in_bytes() > 0
    recovered.close()


def test_changing_the_format_of_a_log_drops_or_starts_the_epoch_cache(tmp_path):
    log = open_log(tmp_path, 1)
    assert log.leader_epoch_cache is None
    log.update_config(LogConfig())
    assert log.leader_epoch_cache is not None
    log.append_as_leader(v2(pairs(2)), leader_epoch=3)
    assert log.latest_epoch == 3
    log.update_config(LogConfig(message_format_version=api_version("0.10.0")))
    assert log.leader_epoch_cache is None
    assert not os.path.exists(os.path.join(log.dir, log_files.LEADER_EPOCH_CHECKPOINT_FILE))
    # appends after the downgrade are in format v1, after the v2 batch already there
    log.append_as_leader(v2(pairs(2, b"y")), leader_epoch=3)
    assert [b.magic for b in MemoryRecords(segment_bytes(log)).batches()] == [2, 1, 1]
    assert [o for o, *_ in read_all(log)] == [0, 1, 2, 3]
    log.close()


# ---------------------------------------------------------------------------- replication

def test_a_follower_stores_the_leaders_v1_entries_byte_for_byte(tmp_path):
    leader = open_log(tmp_path / "leader", 1)
    follower = open_log(tmp_path / "follower", 1)
    leader.append_as_leader(v2(pairs(3)), leader_epoch=1)
    leader.append_as_leader(v2(pairs(3, b"z"), CompressionType.SNAPPY), leader_epoch=1)
    fetched = leader.read(0, 1 << 16).records
    data = MemoryRecords(bytearray(fetched.read_bytes(0, fetched.size_in_bytes())))
    info = follower.append_as_follower(data)
    assert (info.last_offset, follower.log_end_offset) == (5, 6)
    assert segment_bytes(follower) == segment_bytes(leader)
    # the next fetch continues after the wrapper's last offset
    leader.append_as_leader(v2(pairs(1, b"n")), leader_epoch=1)
    more = leader.read(6, 1 << 16).records
    follower.append_as_follower(MemoryRecords(bytearray(more.read_bytes(0, more.size_in_bytes()))))
    assert segment_bytes(follower) == segment_bytes(leader)
    leader.close()
    follower.close()


# ---------------------------------------------------------------------------- compaction

@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP])
@pytest.mark.parametrize("magic", [0, 1])
def test_compaction_of_a_legacy_log_keeps_the_latest_value_of_each_key(tmp_path, magic, codec):
    time = MockTime(current_time_ms=NOW)
    log = open_log(tmp_path, magic, time=time, cleanup_policy="compact", segment_size=1024,
                   delete_retention_ms=0, file_delete_delay_ms=0)
    latest = {}
    offset = 0
    for round_ in range(12):
        batch = [(b"key-%d" % ((round_ * 3 + i) % 5), b"value-%d-%d" % (round_, i)) for i in range(3)]
        log.append_as_leader(v2(batch, codec, ts=NOW + round_), leader_epoch=0)
        for k, v in batch:
            latest[k] = (offset, v)
            offset += 1
    log.roll()
    log.update_high_watermark(log.log_end_offset)
    before = sum(s.size for s in log.log_segments)
    cleaner = Cleaner(0, SkimpyOffsetMap(1 << 20), 4096, 1 << 20, 0.9, Throttler(DOUBLE_MAX_VALUE, time=time),
                      time, lambda tp: None)
    cleaner.clean(LogToClean(TP, log, 0, log.active_segment.base_offset))
    after = sum(s.size for s in log.log_segments)
    assert after < before
    kept = read_all(log)
    assert {k: (o, v) for o, _, k, v in kept} == latest
    assert sorted((o, v) for o, _, k, v in kept) == sorted(latest.values())
    for segment in log.log_segments:
        data = segment.log.read_bytes(0, segment.size)
        assert {m for m, _ in kafka_python_read(data)} <= {magic}
    log.close()


def test_crc_of_what_the_cleaner_rewrites_is_valid(tmp_path):
    """A wrapper that loses messages is rebuilt: its new CRC and its inner ones must hold."""
    time = MockTime(current_time_ms=NOW)
    log = open_log(tmp_path, 1, time=time, cleanup_policy="compact")
    log.append_as_leader(v2([(b"a", b"1"), (b"b", b"1"), (b"c", b"1")], CompressionType.GZIP), leader_epoch=0)
    log.append_as_leader(v2([(b"b", b"2")]), leader_epoch=0)
    log.roll()
    log.update_high_watermark(log.log_end_offset)
    cleaner = Cleaner(0, SkimpyOffsetMap(1 << 20), 4096, 1 << 20, 0.9, Throttler(DOUBLE_MAX_VALUE, time=time),
                      time, lambda tp: None)
    cleaner.clean(LogToClean(TP, log, 0, log.active_segment.base_offset))
    data = log.log_segments[0].log.read_bytes(0, log.log_segments[0].size)
    entries = kafka_python_read(data)
    assert [(m, [(o, k, v) for o, _, k, v in rows]) for m, rows in entries] == [
        (1, [(0, b"a", b"1"), (2, b"c", b"1")]), (1, [(3, b"b", b"2")])]
    # the rebuilt wrapper sits at its last kept offset and passes zlib's CRC-32
    assert struct.unpack_from(">q", data)[0] == 2
    size = struct.unpack_from(">i", data, 8)[0]
    assert struct.unpack_from(">I", data, 12)[0] == zlib.crc32(data[16:12 + size])
    log.close()
