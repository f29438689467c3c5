"""LogSegment: append/read/truncate/recover over real files (after Kafka's LogSegmentTest)."""
from __future__ import annotations

import os
import random

import pytest

from kafka_py.clients.common.errors import LogSegmentOffsetOverflowException
from kafka_py.log import log_files
from kafka_py.log.abstract_index import CorruptIndexException
from kafka_py.log.log_append_info import RollParams
from kafka_py.log.log_segment import LogSegment
from kafka_py.log.producer_state_manager import ProducerStateManager
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.utils.time import MockTime
from tests.log.log_test_helpers import config, decode, make_records

TP = TopicPartition("seg", 0)


@pytest.fixture
def time():
    return MockTime()


def new_segment(dir, base_offset=40, time=None, index_interval=10, **cfg):
    cfg.setdefault("segment_jitter_ms", 0)
    return LogSegment.open(str(dir), base_offset, config(index_interval=index_interval, **cfg),
                           time or MockTime())


def append(segment, offset, *values, timestamp=1000):
    records = make_records(list(values), base_offset=offset, timestamp=timestamp)
    last = offset + len(values) - 1
    segment.append(last, timestamp, last, records)
    return records


def psm(tmp_path):
    return ProducerStateManager(TP, str(tmp_path))


def test_file_names_are_20_digit_base_offsets(tmp_path):
    seg = new_segment(tmp_path, 1234)
    assert os.path.basename(seg.log.file) == "00000000000000001234.log"
    assert os.path.basename(seg.lazy_offset_index.file) == "00000000000000001234.index"
    assert os.path.basename(seg.lazy_time_index.file) == "00000000000000001234.timeindex"
    seg.close()


def test_read_on_empty_segment_returns_none(tmp_path):
    seg = new_segment(tmp_path)
    assert seg.read(40, 300) is None
    seg.close()


def test_read_before_first_offset_returns_from_first_batch(tmp_path):
    seg = new_segment(tmp_path, 40)
    append(seg, 50, b"hello", b"there", b"little", b"bee")
    info = seg.read(41, 300)
    assert [v for _, _, v in decode(info.records)] == [b"hello", b"there", b"little", b"bee"]
    assert info.fetch_offset_metadata.segment_base_offset == 40
    assert info.fetch_offset_metadata.relative_position_in_segment == 0
    seg.close()


def test_read_after_last_offset_returns_none(tmp_path):
    seg = new_segment(tmp_path, 40)
    append(seg, 50, b"hello", b"there")
    assert seg.read(52, 200) is None
    seg.close()


def test_read_from_gap_returns_next_batch(tmp_path):
    seg = new_segment(tmp_path, 40)
    first = append(seg, 50, b"hello", b"there")
    append(seg, 60, b"alpha", b"beta")
    info = seg.read(55, 200)
    assert [o for o, _, _ in decode(info.records)] == [60, 61]
    assert info.fetch_offset_metadata.relative_position_in_segment == first.size_in_bytes
    seg.close()


def test_read_respects_max_size_max_position_and_min_one_message(tmp_path):
    seg = new_segment(tmp_path, 0)
    first = append(seg, 0, b"x" * 100)
    append(seg, 1, b"y" * 100)
    one = first.size_in_bytes
    assert seg.read(0, one).records.size_in_bytes() == one
    partial = seg.read(0, 10)
    assert partial.records.size_in_bytes() == 10
    assert partial.first_entry_incomplete
    whole = seg.read(0, 10, min_one_message=True)
    assert whole.records.size_in_bytes() == one and not whole.first_entry_incomplete
    assert seg.read(0, 10_000, max_position=one).records.size_in_bytes() == one
    # a zero-byte read still reports where the offset lives
    empty = seg.read(1, 0)
    assert empty.records.size_in_bytes == 0 and empty.fetch_offset_metadata.relative_position_in_segment == one
    seg.close()


def test_append_writes_sparse_index_entries(tmp_path):
    seg = new_segment(tmp_path, 0, index_interval=100)
    position = 0
    for i in range(20):
        records = append(seg, i, b"v" * 60, timestamp=1000 + i)
        position += records.size_in_bytes
    entries = seg.offset_index.entries
    assert 0 < entries < 20
    for n in range(entries):
        entry = seg.offset_index.entry(n)
        # every entry points at the start of the batch holding its offset
        found = seg.log.search_for_offset_with_size(entry.offset, 0)
        assert found.position == entry.position
    assert seg.time_index.entries > 0
    seg.close()


def test_truncate_to_middle_then_append(tmp_path):
    seg = new_segment(tmp_path, 40)
    offset = 40
    for i in range(30):
        append(seg, offset, b"a" + bytes([i]), b"b" + bytes([i]))
        offset += 2
    bytes_before = seg.size
    removed = seg.truncate_to(60)
    assert removed > 0 and seg.size == bytes_before - removed
    assert seg.read_next_offset() == 60
    assert seg.read(60, 1000) is None
    assert decode(seg.read(40, 10_000).records)[-1][0] == 59
    append(seg, 60, b"after")
    assert decode(seg.read(60, 1000).records) == [(60, None, b"after")]
    seg.close()


def test_truncate_full_resets_rolling_clock(tmp_path, time):
    seg = new_segment(tmp_path, 40, time=time, segment_ms=2**40)
    append(seg, 40, b"hello", b"there", timestamp=time.milliseconds())
    time.sleep(500)
    assert seg.truncate_to(0) > 0
    assert seg.size == 0
    assert seg.time_waited_for_roll(time.milliseconds(), -1) == 0
    assert seg.read(0, 1024) is None
    seg.close()


def test_truncate_to_empty_segment_keeps_indexes_usable(tmp_path):
    seg = new_segment(tmp_path, 0)
    seg.truncate_to(0)
    append(seg, 0, b"v")
    assert decode(seg.read(0, 100).records) == [(0, None, b"v")]
    seg.close()


def test_reload_largest_timestamp_after_truncation(tmp_path):
    seg = new_segment(tmp_path, 40, index_interval=1)
    for i in range(10):
        append(seg, 40 + i, b"v", timestamp=100 + i)
    assert seg.largest_timestamp == 109
    seg.truncate_to(45)
    assert seg.max_timestamp_so_far == 104
    assert seg.offset_of_max_timestamp_so_far == 44
    seg.close()


def test_find_offset_by_timestamp(tmp_path):
    seg = new_segment(tmp_path, 40, index_interval=1)
    for i in range(10):
        append(seg, 40 + i, b"v", timestamp=1000 + 10 * i)
    assert seg.find_offset_by_timestamp(1000).offset == 40
    assert seg.find_offset_by_timestamp(1015).offset == 42
    assert seg.find_offset_by_timestamp(1090).offset == 49
    assert seg.find_offset_by_timestamp(2000) is None
    assert seg.find_offset_by_timestamp(0, starting_offset=45).offset == 45
    seg.close()


def test_next_offset_calculation(tmp_path):
    seg = new_segment(tmp_path, 40)
    assert seg.read_next_offset() == 40
    append(seg, 50, b"hello", b"there", b"you")
    assert seg.read_next_offset() == 53
    seg.close()


def test_change_file_suffixes_and_delete(tmp_path):
    seg = new_segment(tmp_path, 40)
    append(seg, 40, b"v")
    assert seg.offset_index.entries == 0 and seg.time_index.entries == 0  # index files exist once loaded
    seg.change_file_suffixes("", ".deleted")
    assert seg.log.file.endswith(".log.deleted")
    assert os.path.exists(seg.log.file)
    assert os.path.exists(seg.lazy_offset_index.file) and seg.lazy_offset_index.file.endswith(".index.deleted")
    assert os.path.exists(seg.lazy_time_index.file)
    seg.delete_if_exists()
    assert os.listdir(tmp_path) == []


def test_recovery_rebuilds_a_corrupt_offset_index(tmp_path):
    seg = new_segment(tmp_path, 0, index_interval=1)
    for i in range(100):
        append(seg, i, str(i).encode())
    entries = [seg.offset_index.entry(n) for n in range(seg.offset_index.entries)]
    # scribble over the index: entries pointing nowhere
    seg.offset_index.truncate()
    for n in range(10):
        seg.offset_index.append(n + 1, 999_999 + n)
    assert seg.recover(psm(tmp_path)) == 0
    assert [seg.offset_index.entry(n) for n in range(seg.offset_index.entries)] == entries
    for i in range(100):
        assert decode(seg.read(i, 200, min_one_message=True).records)[0][0] == i
    seg.close()


def test_recovery_rebuilds_a_corrupt_time_index(tmp_path):
    seg = new_segment(tmp_path, 0, index_interval=1)
    for i in range(100):
        append(seg, i, str(i).encode(), timestamp=i * 10)
    seg.time_index.truncate()
    seg.time_index.maybe_append(5, 50)
    seg.recover(psm(tmp_path))
    for i in range(100):
        assert seg.find_offset_by_timestamp(i * 10).offset == i
        if i < 99:
            assert seg.find_offset_by_timestamp(i * 10 + 1).offset == i + 1
    seg.close()


@pytest.mark.parametrize("seed", range(6))
def test_recovery_with_corrupt_message_truncates_from_the_bad_batch(tmp_path, seed):
    rnd = random.Random(seed)
    os.makedirs(tmp_path / str(seed))
    seg = new_segment(tmp_path / str(seed), 0, index_interval=1)
    positions = []
    for i in range(50):
        positions.append(seg.size)
        append(seg, i, str(i).encode() * 5)
    hit = rnd.randrange(50)
    # flip a byte inside the CRC-covered part of batch ``hit``
    with open(seg.log.file, "r+b") as f:
        f.seek(positions[hit] + 40)
        byte = f.read(1)
        f.seek(positions[hit] + 40)
        f.write(bytes([byte[0] ^ 0xFF]))
    truncated = seg.recover(psm(tmp_path / str(seed)))
    assert truncated > 0
    assert seg.size == positions[hit]
    assert seg.read_next_offset() == hit
    seg.close()


def test_recovery_drops_a_torn_tail(tmp_path):
    seg = new_segment(tmp_path, 0)
    for i in range(5):
        append(seg, i, b"abc" * 10)
    good = seg.size
    with open(seg.log.file, "ab") as f:
        f.write(make_records([b"torn" * 10], base_offset=5).buffer.tobytes()[:40])
    seg.close_handlers()  # a crash: no trim, no index sealing
    seg2 = new_segment(tmp_path, 0)
    assert seg2.size == good + 40
    assert seg2.recover(psm(tmp_path)) == 40
    assert seg2.size == good and seg2.read_next_offset() == 5
    seg2.close()


def test_recover_updates_producer_state_and_leader_epochs(tmp_path):
    from kafka_py.server.checkpoints.leader_epoch_checkpoint_file import LeaderEpochCheckpointFile
    from kafka_py.server.epoch.leader_epoch_file_cache import LeaderEpochFileCache

    seg = new_segment(tmp_path, 0)
    seg.append(1, 1000, 1, make_records([b"a", b"b"], base_offset=0, partition_leader_epoch=3,
                                        producer_id=7, producer_epoch=0, base_sequence=0))
    seg.append(2, 1000, 2, make_records([b"c"], base_offset=2, partition_leader_epoch=5))
    state = psm(tmp_path)
    cache = LeaderEpochFileCache(TP, lambda: 3, LeaderEpochCheckpointFile(str(tmp_path / "leader-epoch-checkpoint")))
    seg.recover(state, cache)
    assert state.map_end_offset == 3
    assert state.last_entry(7).last_seq == 1
    assert [(e.epoch, e.start_offset) for e in cache.epoch_entries] == [(3, 0), (5, 2)]
    seg.close()


def test_offset_overflow_is_refused(tmp_path):
    seg = new_segment(tmp_path, 0)
    with pytest.raises(LogSegmentOffsetOverflowException):
        append(seg, 2**31, b"too far")
    seg.close()


def test_should_roll_by_size_time_index_and_offset(tmp_path, time):
    seg = new_segment(tmp_path, 0, time=time, segment_ms=1000)
    now = time.milliseconds()
    assert not seg.should_roll(RollParams(1000, 1000, now, 0, 10, now))  # empty: never by time
    records = append(seg, 0, b"x" * 100, timestamp=now)
    size = records.size_in_bytes
    assert not seg.should_roll(RollParams(1000, 10_000, now, 1, 10, now))
    assert seg.should_roll(RollParams(1000, size + 5, now, 1, 10, now))           # bytes
    assert seg.should_roll(RollParams(1000, 10_000, now + 1001, 1, 10, now))     # record time
    assert seg.should_roll(RollParams(1000, 10_000, now, 2**31, 10, now))        # offset overflow
    seg.close()


def test_should_roll_uses_wall_clock_without_timestamps(tmp_path, time):
    seg = new_segment(tmp_path, 0, time=time)
    records = make_records([b"x"], timestamp=-1)
    seg.append(0, -1, 0, records)
    assert not seg.should_roll(RollParams(1000, 10_000, -1, 1, 10, time.milliseconds()))
    time.sleep(1001)
    assert seg.should_roll(RollParams(1000, 10_000, -1, 1, 10, time.milliseconds()))
    seg.close()


def test_roll_jitter_is_subtracted(tmp_path, time):
    seg = LogSegment(*_parts(tmp_path, time), base_offset=0, index_interval_bytes=4096, roll_jitter_ms=400, time=time)
    now = time.milliseconds()
    append(seg, 0, b"x", timestamp=now)
    assert seg.should_roll(RollParams(1000, 10_000, now + 601, 1, 10, now))
    assert not seg.should_roll(RollParams(1000, 10_000, now + 599, 1, 10, now))
    seg.close()


def _parts(tmp_path, time):
    from kafka_py.log.log_segment import LazyIndex
    from kafka_py.clients.common.record.file_records import FileRecords

    d = str(tmp_path)
    return (FileRecords.open(log_files.log_file(d, 0)),
            LazyIndex.for_offset(log_files.offset_index_file(d, 0), 0, 1024 * 1024),
            LazyIndex.for_time(log_files.time_index_file(d, 0), 0, 1024 * 1024))


def test_close_seals_time_index_and_reopen_restores_largest_timestamp(tmp_path):
    seg = new_segment(tmp_path, 0)
    for i in range(3):
        append(seg, i, b"v", timestamp=500 + i)
    seg.close()
    reopened = new_segment(tmp_path, 0)
    assert reopened.largest_timestamp == 502
    assert reopened.read_next_offset() == 3
    reopened.close()


def test_on_becoming_inactive_trims_files(tmp_path):
    seg = LogSegment.open(str(tmp_path), 0, config(index_interval=10, preallocate=True), MockTime(),
                          init_file_size=512 * 1024, preallocate=True)
    append(seg, 0, b"v" * 30)
    assert os.path.getsize(seg.log.file) == 512 * 1024
    seg.on_become_inactive_segment()
    assert os.path.getsize(seg.log.file) == seg.size
    assert os.path.getsize(seg.lazy_offset_index.file) == 8 * seg.offset_index.entries
    assert os.path.getsize(seg.lazy_time_index.file) == 12 * seg.time_index.entries
    seg.close()


def test_sanity_check_reports_missing_and_corrupt_indexes(tmp_path):
    seg = new_segment(tmp_path, 0)
    append(seg, 0, b"v")
    assert not seg.offset_index.is_full()  # the Log's roll check loads (creates) the index on every append
    seg.close()
    os.remove(log_files.offset_index_file(str(tmp_path), 0))
    missing = new_segment(tmp_path, 0)
    with pytest.raises(FileNotFoundError):
        missing.sanity_check(False)
    missing.close()
    with open(log_files.offset_index_file(str(tmp_path), 0), "wb") as f:
        f.write(b"\xff" * 13)  # not a whole number of entries
    corrupt = new_segment(tmp_path, 0)
    with pytest.raises(CorruptIndexException):
        corrupt.sanity_check(False)
    corrupt.close_handlers()


def test_append_from_file_copies_whole_batches(tmp_path):
    os.makedirs(tmp_path / "a")
    src = new_segment(tmp_path / "a", 0)
    for i in range(10):
        append(src, i, b"v%d" % i, timestamp=100 + i)
    os.makedirs(tmp_path / "b")
    dst = new_segment(tmp_path / "b", 0)
    assert dst.append_from_file(src.log, 0) == src.size
    assert decode(dst.read(0, 10_000).records) == decode(src.read(0, 10_000).records)
    assert dst.largest_timestamp == 109
    src.close()
    dst.close()
