"""Log: appends, reads, offsets, rolling, retention, truncation, reopen (after Kafka's LogTest)."""
from __future__ import annotations

import os

import pytest

from kafka_py.clients.common.errors import (
    CorruptRecordException,
    InvalidRecordException,
    KafkaStorageException,
    OffsetOutOfRangeException,
    OutOfOrderSequenceException,
    RecordBatchTooLargeException,
    RecordTooLargeException,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log import log_files
from kafka_py.log.log import (
    FetchIsolation,
    Log,
    LogOffsetMetadata,
    OffsetsOutOfOrderException,
    UnexpectedAppendOffsetException,
)
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.clients.common.record.default_record_batch import TimestampType
from kafka_py.core.utils.kafka_scheduler import MockScheduler
from kafka_py.clients.common.utils.time import MockTime
from tests.log.log_test_helpers import config, decode, make_records, read_all, segment_files, values_of


@pytest.fixture
def time():
    return MockTime(current_time_ms=1_000_000)


@pytest.fixture
def scheduler(time):
    s = MockScheduler(time)
    s.startup()
    yield s
    s.shutdown()


def open_log(tmp_path, cfg=None, time=None, scheduler=None, name="topic-0", **kwargs) -> Log:
    return Log(str(tmp_path / name), cfg or config(), time=time or MockTime(), scheduler=scheduler, **kwargs)


def append_values(log, values, leader_epoch=0, **kwargs):
    return log.append_as_leader(make_records(values, **kwargs), leader_epoch=leader_epoch)


# ---------------------------------------------------------------------------- append


def test_append_as_leader_assigns_consecutive_offsets_in_place(tmp_path):
    log = open_log(tmp_path)
    first = append_values(log, [b"a", b"b", b"c"])
    second = append_values(log, [b"d"])
    assert (first.first_offset.message_offset, first.last_offset) == (0, 2)
    assert (second.first_offset.message_offset, second.last_offset) == (3, 3)
    assert second.first_offset.segment_base_offset == 0
    assert second.first_offset.relative_position_in_segment > 0
    assert log.log_end_offset == 4
    assert read_all(log) == [(0, None, b"a"), (1, None, b"b"), (2, None, b"c"), (3, None, b"d")]
    # the stored batch carries the assigned base offset and leader epoch
    batch = next(iter(log.read(3, 1000).records.batches()))
    assert (batch.base_offset, batch.partition_leader_epoch) == (3, 0)
    log.close()


def test_append_keeps_keys_and_headers_untouched(tmp_path):
    log = open_log(tmp_path)
    append_values(log, [(b"k1", b"v1"), (None, b"v2"), (b"k3", None)])
    assert read_all(log) == [(0, b"k1", b"v1"), (1, None, b"v2"), (2, b"k3", None)]
    log.close()


def test_record_batch_larger_than_max_message_bytes_is_refused(tmp_path):
    log = open_log(tmp_path, config(max_message_size=200))
    with pytest.raises(RecordTooLargeException):
        append_values(log, [b"x" * 300])
    assert log.log_end_offset == 0
    append_values(log, [b"x" * 50])
    assert log.log_end_offset == 1
    log.close()


def test_batch_larger_than_segment_is_refused(tmp_path):
    log = open_log(tmp_path, config(segment_size=150, max_message_size=10_000))
    with pytest.raises(RecordBatchTooLargeException):
        append_values(log, [b"x" * 300])
    log.close()


def test_corrupt_batch_is_refused(tmp_path):
    log = open_log(tmp_path)
    records = make_records([b"hello"])
    records.buffer[-1] ^= 0x01
    with pytest.raises(CorruptRecordException):
        log.append_as_leader(records, leader_epoch=0)
    assert log.log_end_offset == 0 and log.size == 0
    log.close()


def test_client_batch_with_nonzero_base_offset_is_refused(tmp_path):
    log = open_log(tmp_path)
    with pytest.raises(InvalidRecordException):
        log.append_as_leader(make_records([b"x"], base_offset=7), leader_epoch=0)
    log.close()


def test_partial_trailing_batch_is_trimmed(tmp_path):
    log = open_log(tmp_path)
    records = make_records([b"whole"])
    from kafka_py.clients.common.record.memory_records import MemoryRecords

    cut = make_records([b"second batch, cut short" * 4]).buffer.tobytes()[:70]
    torn = MemoryRecords(bytearray(records.buffer.tobytes() + cut))
    info = log.append_as_leader(torn, leader_epoch=0)
    assert info.valid_bytes == records.size_in_bytes
    assert log.size == records.size_in_bytes
    log.close()


def test_log_append_time_overrides_timestamps(tmp_path, time):
    log = open_log(tmp_path, config(message_timestamp_type="LogAppendTime"), time=time)
    info = append_values(log, [b"a"], timestamp=5)
    assert info.log_append_time == time.milliseconds()
    batch = next(iter(log.read(0, 1000).records.batches()))
    assert batch.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert batch.max_timestamp == time.milliseconds()
    log.close()


def test_append_as_follower_keeps_offsets_and_epochs(tmp_path):
    log = open_log(tmp_path)
    log.append_as_follower(make_records([b"a", b"b"], base_offset=0, partition_leader_epoch=4))
    log.append_as_follower(make_records([b"c"], base_offset=5, partition_leader_epoch=6))
    assert log.log_end_offset == 6
    assert [o for o, _, _ in read_all(log)] == [0, 1, 5]
    assert log.latest_epoch == 6
    assert log.end_offset_for_epoch(4) == (5, 4)
    with pytest.raises(UnexpectedAppendOffsetException):
        log.append_as_follower(make_records([b"old"], base_offset=3))
    from kafka_py.clients.common.record.memory_records import MemoryRecords

    two = MemoryRecords(bytearray(make_records([b"x"], base_offset=9).buffer.tobytes()
                                  + make_records([b"y"], base_offset=8).buffer.tobytes()))
    with pytest.raises(OffsetsOutOfOrderException):
        log.append_as_follower(two)
    log.close()


def test_follower_ignores_max_message_bytes(tmp_path):
    log = open_log(tmp_path, config(max_message_size=100))
    log.append_as_follower(make_records([b"x" * 500], base_offset=0))
    assert log.log_end_offset == 1
    log.close()


def test_flush_messages_moves_the_recovery_point(tmp_path):
    log = open_log(tmp_path, config(flush_interval=3))
    append_values(log, [b"a"])
    append_values(log, [b"b"])
    assert log.recovery_point == 0
    append_values(log, [b"c"])
    assert log.recovery_point == 3
    log.close()


# ---------------------------------------------------------------------------- idempotence


def test_idempotent_duplicate_returns_original_offsets_without_reappending(tmp_path):
    log = open_log(tmp_path)
    kwargs = dict(producer_id=42, producer_epoch=0, base_sequence=0)
    append_values(log, [b"x"])
    first = append_values(log, [b"a", b"b"], **kwargs)
    size = log.size
    again = append_values(log, [b"a", b"b"], **kwargs)
    assert (again.first_offset.message_offset, again.last_offset) == (1, 2) == (
        first.first_offset.message_offset, first.last_offset)
    assert log.size == size and log.log_end_offset == 3
    with pytest.raises(OutOfOrderSequenceException):
        append_values(log, [b"gap"], producer_id=42, producer_epoch=0, base_sequence=5)
    nxt = append_values(log, [b"c"], producer_id=42, producer_epoch=0, base_sequence=2)
    assert nxt.first_offset.message_offset == 3
    log.close()


def test_duplicate_detection_survives_reopen(tmp_path):
    log = open_log(tmp_path)
    append_values(log, [b"a"], producer_id=7, producer_epoch=1, base_sequence=0)
    log.close()
    for clean in (True, False):
        log = open_log(tmp_path, had_clean_shutdown=clean)
        again = append_values(log, [b"a"], producer_id=7, producer_epoch=1, base_sequence=0)
        assert again.last_offset == 0 and log.log_end_offset == 1
        log.close()


# ---------------------------------------------------------------------------- read


def test_read_out_of_range(tmp_path):
    log = open_log(tmp_path)
    append_values(log, [b"a", b"b"])
    with pytest.raises(OffsetOutOfRangeException):
        log.read(3, 100)
    with pytest.raises(OffsetOutOfRangeException):
        log.read(-1, 100)
    at_end = log.read(2, 100)
    assert at_end.records.size_in_bytes == 0
    assert at_end.fetch_offset_metadata.message_offset == 2
    log.close()


def test_read_isolation_levels(tmp_path):
    log = open_log(tmp_path)
    for i in range(5):
        append_values(log, [str(i).encode()])
    assert log.high_watermark == 0
    assert read_all(log, 0, FetchIsolation.HIGH_WATERMARK) == []
    log.update_high_watermark(3)
    assert [o for o, _, _ in read_all(log, 0, FetchIsolation.HIGH_WATERMARK)] == [0, 1, 2]
    assert [o for o, _, _ in read_all(log, 0, FetchIsolation.TXN_COMMITTED)] == [0, 1, 2]
    assert log.read(1, 1000, FetchIsolation.TXN_COMMITTED).aborted_transactions == []
    assert [o for o, _, _ in read_all(log, 0, FetchIsolation.LOG_END)] == [0, 1, 2, 3, 4]
    beyond_hw = log.read(4, 1000, FetchIsolation.HIGH_WATERMARK)
    assert beyond_hw.records.size_in_bytes == 0
    log.close()


def test_read_spans_segments_and_min_one_message(tmp_path):
    log = open_log(tmp_path, config(segment_size=300))
    for i in range(20):
        append_values(log, [b"%03d" % i + b"x" * 40])
    assert log.number_of_segments > 3
    assert [v[:3] for v in values_of(read_all(log, 0, max_length=64))] == [b"%03d" % i for i in range(20)]
    tiny = log.read(5, 1, FetchIsolation.LOG_END, min_one_message=False)
    assert tiny.records.size_in_bytes() == 1 and tiny.first_entry_incomplete
    one = log.read(5, 1, FetchIsolation.LOG_END, min_one_message=True)
    assert decode(one.records)[0][0] == 5
    log.close()


def test_read_returns_file_slice_not_bytes(tmp_path):
    from kafka_py.clients.common.record.file_records import FileRecords

    log = open_log(tmp_path)
    append_values(log, [b"a"])
    info = log.read(0, 1000)
    assert isinstance(info.records, FileRecords) and info.records.is_slice
    log.close()


# ---------------------------------------------------------------------------- high watermark & start offset


def test_high_watermark_is_clamped_and_monotonic_increments(tmp_path):
    log = open_log(tmp_path)
    append_values(log, [b"a", b"b", b"c"])
    assert log.update_high_watermark(10) == 3
    assert log.update_high_watermark(-5) == 0
    assert log.maybe_increment_high_watermark(log.log_end_offset_metadata) is not None
    assert log.high_watermark == 3
    assert log.maybe_increment_high_watermark(LogOffsetMetadata(2, 0, 0)) is None
    with pytest.raises(ValueError):
        log.maybe_increment_high_watermark(LogOffsetMetadata(4))
    snapshot = log.fetch_offset_snapshot()
    assert snapshot.high_watermark.message_offset == 3 and snapshot.log_end_offset.message_offset == 3
    log.close()


def test_delete_records_moves_log_start_offset_and_deletes_segments(tmp_path):
    log = open_log(tmp_path, config(segment_size=200, retention_ms=-1))
    for i in range(10):
        append_values(log, [b"v" * 50])
    segments = log.number_of_segments
    with pytest.raises(OffsetOutOfRangeException):
        log.maybe_increment_log_start_offset(5)  # beyond the high watermark
    log.update_high_watermark(log.log_end_offset)
    assert log.maybe_increment_log_start_offset(5)
    assert not log.maybe_increment_log_start_offset(4)
    assert log.log_start_offset == 5
    with pytest.raises(OffsetOutOfRangeException):
        log.read(4, 100)
    deleted = log.delete_old_segments()
    assert deleted > 0 and log.number_of_segments == segments - deleted
    assert log.log_segments[0].base_offset <= 5 and log.log_start_offset == 5
    assert read_all(log)[0][0] == 5
    log.close()


# ---------------------------------------------------------------------------- roll


def test_roll_by_segment_bytes_and_by_time(tmp_path, time):
    log = open_log(tmp_path, config(segment_size=1000, segment_ms=60_000, segment_jitter_ms=0), time=time)
    append_values(log, [b"x" * 100], timestamp=time.milliseconds())
    assert log.number_of_segments == 1
    time.sleep(60_001)
    append_values(log, [b"y"], timestamp=time.milliseconds())
    assert log.number_of_segments == 2 and log.active_segment.base_offset == 1
    for _ in range(12):
        append_values(log, [b"z" * 100], timestamp=time.milliseconds())
    assert log.number_of_segments > 2
    assert all(s.size <= 1000 for s in log.log_segments)
    log.close()


def test_explicit_roll_and_empty_roll(tmp_path):
    log = open_log(tmp_path)
    append_values(log, [b"a"])
    new = log.roll()
    assert new.base_offset == 1 and log.number_of_segments == 2
    # rolling again at the same offset replaces the empty active segment
    again = log.roll()
    assert again.base_offset == 1 and log.number_of_segments == 2
    append_values(log, [b"b"])
    assert segment_files(log.dir, ".log") == ["00000000000000000000.log", "00000000000000000001.log"]
    log.close()


def test_roll_seals_previous_segment_and_schedules_flush(tmp_path, time, scheduler):
    log = open_log(tmp_path, time=time, scheduler=scheduler)
    append_values(log, [b"a", b"b"])
    old = log.active_segment
    log.roll()
    # the post-roll flush ran (MockScheduler runs due tasks at once) and moved the recovery point
    assert log.recovery_point == 2
    assert os.path.getsize(old.log.file) == old.size
    assert os.path.getsize(old.lazy_offset_index.file) == 8 * old.offset_index.entries
    log.close()


# ---------------------------------------------------------------------------- retention


def test_retention_by_size(tmp_path):
    log = open_log(tmp_path, config(segment_size=300, retention_size=700, retention_ms=-1))
    for i in range(30):
        append_values(log, [b"%02d" % i + b"x" * 50])
    log.update_high_watermark(log.log_end_offset)
    total = log.size
    deleted = log.delete_old_segments()
    assert deleted > 0
    # Kafka deletes a segment only while the rest still holds at least retention.bytes
    assert 700 <= log.size < 700 + 300 < total
    # only whole segments from the front go, and the log start offset follows them
    assert log.log_start_offset == log.log_segments[0].base_offset
    assert read_all(log)[-1][0] == 29
    log.close()


def test_retention_by_time_uses_largest_record_timestamp(tmp_path, time):
    log = open_log(tmp_path, config(segment_size=200, retention_ms=10_000), time=time)
    now = time.milliseconds()
    for i in range(6):
        append_values(log, [b"x" * 60], timestamp=now - 20_000)  # old records
    for i in range(3):
        append_values(log, [b"y" * 60], timestamp=now)  # fresh records
    log.update_high_watermark(log.log_end_offset)
    assert log.delete_old_segments() > 0
    assert all(v.startswith(b"y") for v in values_of(read_all(log)))
    assert len(read_all(log)) == 3
    log.close()


def test_retention_never_passes_high_watermark(tmp_path):
    log = open_log(tmp_path, config(segment_size=200, retention_size=0))
    for i in range(10):
        append_values(log, [b"x" * 60])
    assert log.delete_old_segments() == 0  # high watermark still 0
    log.update_high_watermark(3)
    log.delete_old_segments()
    assert log.log_start_offset <= 3
    log.close()


def test_no_time_or_size_retention_without_delete_policy(tmp_path):
    log = open_log(tmp_path, config(segment_size=200, retention_size=0, cleanup_policy="compact"))
    for i in range(10):
        append_values(log, [(b"k", b"x" * 60)])
    log.update_high_watermark(log.log_end_offset)
    assert log.delete_old_segments() == 0
    log.close()


def test_async_segment_deletion_renames_then_deletes_after_delay(tmp_path, time, scheduler):
    log = open_log(tmp_path, config(segment_size=200, file_delete_delay_ms=5000), time=time, scheduler=scheduler)
    for i in range(10):
        append_values(log, [b"x" * 60])
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(6)
    deleted = log.delete_old_segments()
    assert deleted > 0
    pending = segment_files(log.dir, ".deleted")
    assert any(name.endswith(".log.deleted") for name in pending)
    time.sleep(4999)
    assert segment_files(log.dir, ".deleted") == pending
    time.sleep(2)
    assert segment_files(log.dir, ".deleted") == []
    log.close()


def test_deleting_every_segment_rolls_a_new_one(tmp_path):
    log = open_log(tmp_path, config(segment_size=10_000, retention_size=0))
    for i in range(3):
        append_values(log, [b"x" * 30])
    log.update_high_watermark(log.log_end_offset)
    assert log.delete_old_segments() == 1
    assert log.number_of_segments == 1
    assert log.active_segment.base_offset == 3 == log.log_start_offset == log.log_end_offset
    append_values(log, [b"next"])
    assert read_all(log) == [(3, None, b"next")]
    log.close()


# ---------------------------------------------------------------------------- offsets by time


def test_fetch_offset_by_timestamp(tmp_path):
    log = open_log(tmp_path, config(segment_size=250, index_interval=1))
    for i in range(10):
        append_values(log, [b"v" * 40], timestamp=1000 * (i + 1), leader_epoch=i // 5)
    assert log.fetch_offset_by_timestamp(3000).offset == 2
    assert log.fetch_offset_by_timestamp(3500).offset == 3
    assert log.fetch_offset_by_timestamp(3500).leader_epoch == 0
    assert log.fetch_offset_by_timestamp(8000).leader_epoch == 1
    assert log.fetch_offset_by_timestamp(99_999) is None
    earliest = log.fetch_offset_by_timestamp(-2)
    latest = log.fetch_offset_by_timestamp(-1)
    assert (earliest.offset, earliest.leader_epoch) == (0, 0)
    assert (latest.offset, latest.leader_epoch) == (10, 1)
    assert log.legacy_fetch_offsets_before(-1, 10)[0] == 10
    log.close()


# ---------------------------------------------------------------------------- truncation


def test_truncate_to_removes_later_segments_and_epochs(tmp_path):
    log = open_log(tmp_path, config(segment_size=200))
    for i in range(12):
        append_values(log, [b"%02d" % i + b"x" * 40], leader_epoch=i // 4)
    assert log.latest_epoch == 2
    log.update_high_watermark(log.log_end_offset)
    assert log.truncate_to(5)
    assert log.log_end_offset == 5 and log.high_watermark == 5
    assert [o for o, _, _ in read_all(log)] == [0, 1, 2, 3, 4]
    assert log.latest_epoch == 1
    assert not log.truncate_to(9)
    append_values(log, [b"new"], leader_epoch=3)
    assert read_all(log)[-1] == (5, None, b"new")
    log.close()


def test_truncate_below_first_segment_starts_over(tmp_path):
    log = open_log(tmp_path, config(segment_size=200))
    for i in range(8):
        append_values(log, [b"x" * 40])
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(4)
    log.delete_old_segments()
    first = log.log_segments[0].base_offset
    assert first > 0
    log.truncate_to(first - 1)
    assert log.log_end_offset == first - 1 == log.log_start_offset
    assert log.number_of_segments == 1
    log.close()


def test_truncate_fully_and_start_at(tmp_path):
    log = open_log(tmp_path)
    append_values(log, [b"a", b"b"], leader_epoch=1)
    log.truncate_fully_and_start_at(100)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (100, 100, 100)
    assert log.latest_epoch is None
    append_values(log, [b"c"])
    assert read_all(log) == [(100, None, b"c")]
    log.close()


# ---------------------------------------------------------------------------- lifecycle


def test_clean_reopen_restores_everything(tmp_path):
    log = open_log(tmp_path, config(segment_size=300))
    for i in range(20):
        append_values(log, [b"%02d" % i + b"y" * 30], leader_epoch=2)
    entries = read_all(log)
    log.flush()
    log.close()
    reopened = open_log(tmp_path, config(segment_size=300), recovery_point=20, had_clean_shutdown=True)
    assert reopened.log_end_offset == 20 and reopened.recovery_point == 20
    assert read_all(reopened) == entries
    assert reopened.latest_epoch == 2
    append_values(reopened, [b"more"])
    assert reopened.log_end_offset == 21
    reopened.close()


def test_reopen_with_checkpointed_log_start_offset(tmp_path):
    log = open_log(tmp_path)
    for i in range(5):
        append_values(log, [b"x"])
    log.close()
    reopened = open_log(tmp_path, log_start_offset=3)
    assert reopened.log_start_offset == 3
    assert read_all(reopened)[0][0] == 3
    reopened.close()


def test_rename_dir_and_delete(tmp_path):
    log = open_log(tmp_path)
    append_values(log, [b"a"], leader_epoch=1)
    new_name = log_files.log_delete_dir_name(log.topic_partition)
    log.rename_dir(new_name)
    assert os.path.basename(log.dir) == new_name and not os.path.exists(tmp_path / "topic-0")
    assert os.path.exists(os.path.join(log.dir, "00000000000000000000.log"))
    assert read_all(log) == [(0, None, b"a")]
    append_values(log, [b"b"], leader_epoch=2)  # the epoch checkpoint moved with the directory
    assert os.path.exists(os.path.join(log.dir, "leader-epoch-checkpoint"))
    log.delete()
    assert not os.path.exists(log.dir)
    with pytest.raises(KafkaStorageException):
        append_values(log, [b"c"])


def test_close_handlers_makes_the_log_unusable(tmp_path):
    log = open_log(tmp_path)
    append_values(log, [b"a"])
    log.close_handlers()
    with pytest.raises(KafkaStorageException):
        append_values(log, [b"b"])


def test_update_config_takes_effect_on_the_next_append(tmp_path):
    log = open_log(tmp_path)
    append_values(log, [b"x" * 300])
    log.update_config(config(max_message_size=100))
    with pytest.raises(RecordTooLargeException):
        append_values(log, [b"x" * 300])
    log.close()


@pytest.mark.parametrize("name, expected", [
    ("foo-0", TopicPartition("foo", 0)),
    ("a-b-c-12", TopicPartition("a-b-c", 12)),
    ("foo-3.0123456789abcdef0123456789abcdef-delete", TopicPartition("foo", 3)),
    ("foo-3.0123456789abcdef0123456789abcdef-future", TopicPartition("foo", 3)),
])
def test_parse_topic_partition_name(name, expected):
    assert log_files.parse_topic_partition_name("/data/" + name) == expected


@pytest.mark.parametrize("name", ["foo", "-1", "foo-", "foo-x", "foo-1.x-delete.y", "foo.bar-delete"])
def test_parse_topic_partition_name_rejects_non_log_dirs(name):
    from kafka_py.clients.common.errors import KafkaException

    with pytest.raises(KafkaException):
        log_files.parse_topic_partition_name("/data/" + name)


def test_delete_dir_name_round_trips():
    tp = TopicPartition("x" * 300, 7)
    name = log_files.log_delete_dir_name(tp)
    assert len(name) <= 255 and name.endswith("-delete")
    assert log_files.parse_topic_partition_name(name).partition == 7
    assert log_files.log_file_name(5) == "00000000000000000005.log"
    assert log_files.index_file_name(5) == "00000000000000000005.index"
    assert log_files.time_index_file_name(5) == "00000000000000000005.timeindex"


def test_origin_replication_skips_client_checks(tmp_path):
    log = open_log(tmp_path)
    info = log.append_as_leader(make_records([b"a"], base_offset=12), leader_epoch=0,
                                origin=AppendOrigin.REPLICATION)
    assert info.first_offset.message_offset == 0
    log.close()


def test_concurrent_appends_and_reads_stay_consistent(tmp_path):
    import threading

    log = open_log(tmp_path, config(segment_size=2000))
    errors = []

    def writer(tag):
        try:
            for i in range(150):
                append_values(log, [b"%s-%03d" % (tag, i)] * 2)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def reader():
        try:
            while any(t.is_alive() for t in writers):
                # the last few segments' worth: a read from 0 each time grows with the log and
                # starves the writers of the interpreter
                end = log.log_end_offset
                start = max(0, end - 60)
                entries = read_all(log, start)
                assert [o for o, _, _ in entries][:end - start] == list(range(start, end))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    writers = [threading.Thread(target=writer, args=(tag,)) for tag in (b"a", b"b")]
    readers = [threading.Thread(target=reader)]
    for t in writers + readers:
        t.start()
    for t in writers + readers:
        t.join()
    assert not errors
    entries = read_all(log)
    assert [o for o, _, _ in entries] == list(range(600))
    # each batch's two records are adjacent: appends never interleave inside a batch
    assert all(entries[i][2] == entries[i + 1][2] for i in range(0, 600, 2))
    assert log.number_of_segments > 1
    log.close()


def test_flush_after_close_or_segment_deletion_is_harmless(tmp_path):
    log = open_log(tmp_path, config(segment_size=200, retention_ms=-1))
    for i in range(6):
        append_values(log, [b"x" * 60])
    old = log.log_segments[0]
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(log.log_segments[1].base_offset)
    log.delete_old_segments()  # without a scheduler the files go at once
    assert old not in log.log_segments
    log.recovery_point = 0
    log.flush()  # must not take the directory offline
    assert log.recovery_point == log.log_end_offset
    append_values(log, [b"still writable"])
    log.close()
    log.flush(log.log_end_offset + 5)  # a post-roll flush that fires after close


def test_a_new_log_creates_its_first_segment_and_its_epoch_checkpoint_only_when_assigned(tmp_path):
    # The files of a new partition are Kafka's: the first segment's .log, .index and
    # .timeindex; the leader-epoch-checkpoint appears with the first leader epoch, written
    # in one go (nothing created empty and then replaced), and survives a reopen.
    log = open_log(tmp_path)
    assert sorted(os.listdir(log.dir)) == ["00000000000000000000.index", "00000000000000000000.log",
                                           "00000000000000000000.timeindex"]
    assert log.latest_epoch is None
    log.maybe_assign_epoch_start_offset(3, 0)
    assert sorted(os.listdir(log.dir)) == ["00000000000000000000.index", "00000000000000000000.log",
                                           "00000000000000000000.timeindex", "leader-epoch-checkpoint"]
    append_values(log, [b"a"], leader_epoch=3)
    log.close()
    reopened = open_log(tmp_path)
    assert reopened.latest_epoch == 3
    reopened.close()
