"""LogCleanerManager (choosing logs, states, the cleaner-offset-checkpoint) and the LogCleaner in LogManager."""
from __future__ import annotations

import os
import threading

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.cleaner_config import CleanerConfig
from kafka_py.log.log import Log
from kafka_py.log.log_cleaner_manager import (
    CLEANER_OFFSET_CHECKPOINT_FILE,
    LogCleanerManager,
    LogCleaningInProgress,
    LogCleaningPaused,
)
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_manager import LogManager
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile
from kafka_py.clients.common.utils.time import MockTime
from tests.log.log_test_helpers import read_all

A = TopicPartition("a", 0)
B = TopicPartition("b", 0)
C = TopicPartition("c", 0)


def compact_config(**kwargs) -> LogConfig:
    kwargs.setdefault("cleanup_policy", "compact")
    kwargs.setdefault("segment_size", 500)
    kwargs.setdefault("max_index_size", 4096)
    kwargs.setdefault("file_delete_delay_ms", 0)
    return LogConfig(**kwargs)


def append(log: Log, key: bytes, value: bytes, ts: int) -> None:
    data = build_batch([SimpleRecord(key, value, timestamp=ts)])
    log.append_as_leader(MemoryRecords(bytearray(data)), leader_epoch=0)


def fill(log: Log, n: int, time, keys: int = 5) -> None:
    for i in range(n):
        append(log, b"k%d" % (i % keys), b"value-%04d" % i, time.milliseconds())
    log.roll()
    log.update_high_watermark(log.log_end_offset)


@pytest.fixture
def time():
    return MockTime()


@pytest.fixture
def logs(tmp_path, time):
    opened = {}

    def make(tp: TopicPartition, cfg: LogConfig) -> Log:
        log = Log(str(tmp_path / str(tp)), cfg, time=time)
        opened[tp] = log
        return log

    make.opened = opened
    yield make
    for log in opened.values():
        log.close()


# ---------------------------------------------------------------------------- choosing a log


def test_the_dirtiest_compacted_log_is_chosen_first(tmp_path, time, logs):
    a = logs(A, compact_config())
    b = logs(B, compact_config(min_cleanable_ratio=0.1))
    c = logs(C, compact_config(cleanup_policy="delete"))
    fill(a, 60, time)
    fill(b, 60, time)
    fill(c, 60, time)
    manager = LogCleanerManager([str(tmp_path)], logs.opened)
    # b's first half is already clean: a is dirtier (ratio 1.0)
    manager.update_checkpoints(str(tmp_path), (B, b.log_segments[len(b.log_segments) // 2].base_offset))
    first = manager.grab_filthiest_compacted_log(time)
    assert first.topic_partition == A and first.cleanable_ratio == 1.0
    assert manager.cleaning_state(A) is LogCleaningInProgress
    second = manager.grab_filthiest_compacted_log(time)
    assert second.topic_partition == B and 0.3 < second.cleanable_ratio < 0.7
    # a non-compacted log is never chosen; the others are busy
    assert manager.grab_filthiest_compacted_log(time) is None


def test_a_log_below_min_cleanable_dirty_ratio_is_left_alone(tmp_path, time, logs):
    a = logs(A, compact_config(min_cleanable_ratio=0.6))
    fill(a, 60, time)
    manager = LogCleanerManager([str(tmp_path)], logs.opened)
    middle = a.log_segments[len(a.log_segments) // 2].base_offset
    manager.update_checkpoints(str(tmp_path), (A, middle))
    to_clean_ratio = LogCleanerManager.calculate_cleanable_bytes(a, middle, a.active_segment.base_offset)
    assert to_clean_ratio[0] == a.active_segment.base_offset
    assert manager.grab_filthiest_compacted_log(time) is None
    a.update_config(compact_config(min_cleanable_ratio=0.3))
    chosen = manager.grab_filthiest_compacted_log(time)
    assert chosen.topic_partition == A and chosen.first_dirty_offset == middle


def test_max_compaction_lag_forces_a_clean_below_the_ratio(tmp_path, time, logs):
    a = logs(A, compact_config(min_cleanable_ratio=0.99, max_compaction_lag_ms=60_000))
    fill(a, 60, time)
    manager = LogCleanerManager([str(tmp_path)], logs.opened)
    manager.update_checkpoints(str(tmp_path), (A, a.log_segments[1].base_offset))
    assert manager.grab_filthiest_compacted_log(time) is None
    time.sleep(60_001)
    chosen = manager.grab_filthiest_compacted_log(time)
    assert chosen is not None and chosen.need_compaction_now


def test_min_compaction_lag_keeps_young_segments_out_of_the_cleanable_range(tmp_path, time, logs):
    a = logs(A, compact_config(min_compaction_lag_ms=10_000))
    fill(a, 20, time)
    old_end = a.log_end_offset
    time.sleep(20_000)
    fill(a, 20, time)
    offsets = LogCleanerManager.cleanable_offsets(a, None, time.milliseconds())
    assert offsets.first_dirty_offset == 0
    assert offsets.first_uncleanable_dirty_offset == old_end
    time.sleep(10_001)
    offsets = LogCleanerManager.cleanable_offsets(a, None, time.milliseconds())
    assert offsets.first_uncleanable_dirty_offset == a.active_segment.base_offset


def test_invalid_checkpoints_are_reset_to_the_log_start_offset(tmp_path, time, logs):
    a = logs(A, compact_config())
    fill(a, 30, time)
    beyond_end = LogCleanerManager.cleanable_offsets(a, a.log_end_offset + 10, time.milliseconds())
    assert (beyond_end.first_dirty_offset, beyond_end.force_update_checkpoint) == (0, True)
    a.maybe_increment_log_start_offset(5)
    below_start = LogCleanerManager.cleanable_offsets(a, 2, time.milliseconds())
    assert (below_start.first_dirty_offset, below_start.force_update_checkpoint) == (5, True)
    valid = LogCleanerManager.cleanable_offsets(a, 7, time.milliseconds())
    assert (valid.first_dirty_offset, valid.force_update_checkpoint) == (7, False)
    manager = LogCleanerManager([str(tmp_path)], logs.opened)
    manager.update_checkpoints(str(tmp_path), (A, 2))
    manager.grab_filthiest_compacted_log(time)
    assert manager.all_cleaner_checkpoints()[A] == 5


# ---------------------------------------------------------------------------- states and checkpoints


def test_cleaner_offset_checkpoint_file_uses_kafkas_text_format(tmp_path, time, logs):
    a = logs(A, compact_config())
    b = logs(B, compact_config())
    manager = LogCleanerManager([str(tmp_path)], logs.opened)
    manager.set_cleaning_state(A, LogCleaningInProgress)
    manager.done_cleaning(A, a.parent_dir, 42)
    manager.update_checkpoints(str(tmp_path), (B, 7))
    path = tmp_path / CLEANER_OFFSET_CHECKPOINT_FILE
    lines = path.read_text().splitlines()
    assert lines[:2] == ["0", "2"] and sorted(lines[2:]) == ["a 0 42", "b 0 7"]
    assert OffsetCheckpointFile(str(path)).read() == {A: 42, B: 7}
    # a partition whose log went away is dropped on the next write; removal is explicit too
    del logs.opened[B]
    b.close()
    manager.update_checkpoints(str(tmp_path), partition_to_remove=None)
    assert manager.all_cleaner_checkpoints() == {A: 42}
    manager.maybe_truncate_checkpoint(str(tmp_path), A, 10)
    assert manager.all_cleaner_checkpoints() == {A: 10}
    manager.maybe_truncate_checkpoint(str(tmp_path), A, 20)
    assert manager.all_cleaner_checkpoints() == {A: 10}


def test_pauses_nest_and_an_abort_waits_for_the_running_clean(tmp_path, time, logs):
    logs(A, compact_config())
    manager = LogCleanerManager([str(tmp_path)], logs.opened)
    manager.abort_and_pause_cleaning(A)
    manager.abort_and_pause_cleaning(A)
    assert manager.cleaning_state(A) == LogCleaningPaused(2)
    manager.resume_cleaning([A])
    manager.resume_cleaning([A])
    assert manager.cleaning_state(A) is None
    with pytest.raises(RuntimeError):
        manager.resume_cleaning([A])

    # a clean in progress: the abort blocks until the cleaner reports back
    manager.set_cleaning_state(A, LogCleaningInProgress)
    done = threading.Event()

    def abort():
        manager.abort_and_pause_cleaning(A)
        done.set()

    aborter = threading.Thread(target=abort)
    aborter.start()
    while manager.cleaning_state(A) is LogCleaningInProgress:
        threading.Event().wait(0.01)
    assert not done.is_set()
    with pytest.raises(Exception):
        manager.check_cleaning_aborted(A)
    manager.done_cleaning(A, str(tmp_path), 99)
    aborter.join(10)
    assert done.is_set() and manager.cleaning_state(A) == LogCleaningPaused(1)
    # an aborted clean does not move the checkpoint
    assert A not in manager.all_cleaner_checkpoints()


def test_retention_of_non_compacted_logs_pauses_them_for_the_cleaner(tmp_path, time, logs):
    logs(A, compact_config())
    logs(C, compact_config(cleanup_policy="delete"))
    manager = LogCleanerManager([str(tmp_path)], logs.opened)
    assert [tp for tp, _ in manager.pause_cleaning_for_non_compacted_partitions()] == [C]
    assert manager.cleaning_state(C) == LogCleaningPaused(1)
    assert [tp for tp, _ in manager.deletable_logs()] == [A]
    assert manager.cleaning_state(A) is LogCleaningInProgress
    manager.done_deleting([A])
    manager.resume_cleaning([C])
    assert manager.cleaning_state(A) is None and manager.cleaning_state(C) is None


# ---------------------------------------------------------------------------- in the LogManager


def cleaner_threads():
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("kafka-log-cleaner-thread-"))


def make_manager(tmp_path, cleaner_config, **kwargs) -> LogManager:
    return LogManager([str(tmp_path / "data")], compact_config(), cleaner_config=cleaner_config, **kwargs)


def test_cleaner_threads_start_and_stop_with_the_log_manager(tmp_path):
    before = cleaner_threads()
    manager = make_manager(tmp_path, CleanerConfig(num_threads=2, dedupe_buffer_size=4 * 1024 * 1024,
                                                   back_off_ms=50))
    assert manager.cleaner is None
    manager.startup()
    try:
        assert manager.cleaner.cleaner_count == 2
        assert cleaner_threads() == sorted(before + ["kafka-log-cleaner-thread-0", "kafka-log-cleaner-thread-1"])
        assert all(t.is_alive() for t in manager.cleaner.cleaners)
    finally:
        threads = list(manager.cleaner.cleaners)
        manager.shutdown()
    assert not any(t.is_alive() for t in threads)
    assert cleaner_threads() == before


def test_log_cleaner_enable_false_starts_no_cleaner(tmp_path):
    before = cleaner_threads()
    manager = make_manager(tmp_path, CleanerConfig(enable_cleaner=False))
    manager.startup()
    try:
        assert manager.cleaner is None
        assert cleaner_threads() == before
    finally:
        manager.shutdown()


def test_the_log_managers_cleaner_compacts_a_log_and_checkpoints_it(tmp_path):
    time = MockTime()
    manager = make_manager(tmp_path, CleanerConfig(num_threads=1, dedupe_buffer_size=1024 * 1024, back_off_ms=20),
                           time=time)
    manager.startup()
    try:
        log = manager.get_or_create_log(A, compact_config(min_cleanable_ratio=0.01))
        fill(log, 200, time, keys=10)
        assert manager.cleaner.await_cleaned(A, log.active_segment.base_offset, max_wait_ms=30_000)
        checkpoint = OffsetCheckpointFile(os.path.join(log.parent_dir, CLEANER_OFFSET_CHECKPOINT_FILE)).read()
        assert checkpoint[A] == log.active_segment.base_offset
        entries = read_all(log)
        assert [(k, v) for _, k, v in entries] == [(b"k%d" % (i % 10), b"value-%04d" % i) for i in range(190, 200)]

        # truncation pauses the cleaner and pulls the checkpoint back to the new end
        manager.truncate_to({A: 195})
        checkpoint = OffsetCheckpointFile(os.path.join(log.parent_dir, CLEANER_OFFSET_CHECKPOINT_FILE)).read()
        assert checkpoint[A] == log.active_segment.base_offset <= 195
        assert manager.cleaner.cleaner_manager.cleaning_state(A) in (None, LogCleaningInProgress)

        # deletion drops the partition from the checkpoint
        manager.async_delete(A)
        checkpoint = OffsetCheckpointFile(os.path.join(log.parent_dir, CLEANER_OFFSET_CHECKPOINT_FILE)).read()
        assert A not in checkpoint
    finally:
        manager.shutdown()


def wait_until(condition, timeout_s: float) -> bool:
    event = threading.Event()
    deadline = 0.0
    while not condition():
        if deadline > timeout_s:
            return False
        event.wait(0.02)
        deadline += 0.02
    return True


@pytest.mark.parametrize("enable_cleaner", [True, False])
def test_retention_task_leaves_compacted_logs_to_the_cleaner(tmp_path, enable_cleaner):
    time = MockTime()
    manager = make_manager(tmp_path, CleanerConfig(enable_cleaner=enable_cleaner, back_off_ms=20), time=time)
    manager.startup()
    try:
        both = compact_config(cleanup_policy="compact,delete", retention_ms=1000, min_cleanable_ratio=1.0)
        compacted = manager.get_or_create_log(A, both)
        # keeps the cleaner thread off it until the retention task has had its go
        manager.abort_and_pause_cleaning(A)
        deleting = manager.get_or_create_log(C, compact_config(cleanup_policy="delete", retention_ms=1000))
        for log in (compacted, deleting):
            for i in range(20):
                append(log, b"k%d" % i, b"v", time.milliseconds())
            log.roll()
            log.update_high_watermark(log.log_end_offset)
        time.sleep(5000)
        segments = compacted.number_of_segments
        assert manager.cleanup_logs() > 0
        assert deleting.number_of_segments == 1
        assert compacted.number_of_segments == segments > 1
        manager.resume_cleaning(A)
        if enable_cleaner:
            # the cleaner thread applies compact,delete retention itself
            assert wait_until(lambda: compacted.number_of_segments == 1, 20)
    finally:
        manager.shutdown()


def test_thread_count_is_reconfigurable_within_half_to_double(tmp_path):
    from kafka_py.log.log_cleaner import LogCleaner
    from kafka_py.server.kafka_config import KafkaConfig
    from kafka_py.clients.common.config.config_def import ConfigException

    def broker_config(threads: int) -> KafkaConfig:
        return KafkaConfig({"zookeeper.connect": "zk:2181", "log.cleaner.threads": str(threads),
                            "log.cleaner.dedupe.buffer.size": str(8 * 1024 * 1024), "log.cleaner.backoff.ms": "50"})

    before = cleaner_threads()
    cleaner = LogCleaner(LogCleaner.cleaner_config(broker_config(2)), [str(tmp_path)], {})
    cleaner.startup()
    try:
        assert cleaner.cleaner_count == 2
        with pytest.raises(ConfigException):
            cleaner.validate_reconfiguration(broker_config(5))
        with pytest.raises(ConfigException):
            cleaner.validate_reconfiguration(broker_config(0))
        cleaner.validate_reconfiguration(broker_config(4))
        cleaner.reconfigure(broker_config(2), broker_config(4))
        assert cleaner.current_config.num_threads == 4
        assert cleaner_threads() == sorted(before + [f"kafka-log-cleaner-thread-{i}" for i in range(4)])
    finally:
        cleaner.shutdown()
    assert cleaner_threads() == before
