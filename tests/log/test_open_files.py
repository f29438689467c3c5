"""Open file descriptors of indexes, segments, logs and the LogManager, counted in /proc/self/fd.

As in Kafka, an index's file is open only while it is mapped or remapped, so a segment holds
one descriptor (its .log) and a log of N segments holds N. With an index mapping that kept
its descriptor (Python's mmap.mmap duplicates it), the same log held 2N + 1.
"""
from __future__ import annotations

import logging
import os
import resource
import struct

import pytest

from kafka_py.log import log_files
from kafka_py.log.log import FetchIsolation, Log
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_manager import LogManager
from kafka_py.log.offset_index import OffsetIndex, OffsetPosition
from kafka_py.log.time_index import TimeIndex, TimestampOffset
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.utils.kafka_scheduler import MockScheduler
from kafka_py.clients.common.utils.time import MockTime
from tests.log.log_test_helpers import make_records, read_all

if not os.path.isdir("/proc/self/fd"):
    pytest.skip("needs /proc/self/fd", allow_module_level=True)


def open_files_under(path) -> list[str]:
    """Paths of this process's open descriptors that lie under ``path``."""
    root = os.path.realpath(os.fspath(path)) + os.sep
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the descriptor listdir itself used, closed again
            continue
        if target.startswith(root):
            found.append(target)
    return found


def suffixes(paths: list[str]) -> list[str]:
    return sorted(os.path.splitext(p)[1] for p in paths)


# ---------------------------------------------------------------------------- indexes


def test_index_holds_no_descriptor_through_its_life(tmp_path):
    path = tmp_path / "00000000000000000100.index"
    index = OffsetIndex(path, 100, 10 * 8)
    assert open_files_under(tmp_path) == []

    index.append(100, 0)
    index.append(105, 4096)
    index.flush()  # msync through the mapping alone
    assert path.read_bytes()[:16] == struct.pack(">iiii", 0, 0, 5, 4096)
    assert open_files_under(tmp_path) == []

    # Growing and shrinking reopen the file, remap and close it again.
    assert index.resize(40 * 8)
    assert index.max_entries == 40 and os.path.getsize(path) == 320
    index.append(110, 8192)
    assert index.lookup(111) == OffsetPosition(110, 8192)
    index.trim_to_valid_size()
    assert os.path.getsize(path) == 3 * 8
    assert open_files_under(tmp_path) == []

    renamed = tmp_path / "00000000000000000100.index.deleted"
    index.rename_to(renamed)
    assert index.lookup(105) == OffsetPosition(105, 4096)
    index.truncate_to(105)
    assert index.last_offset == 100
    assert open_files_under(tmp_path) == []

    assert index.delete_if_exists()
    assert not renamed.exists() and not path.exists()
    assert open_files_under(tmp_path) == []


def test_time_index_reopened_read_only_holds_no_descriptor(tmp_path):
    path = tmp_path / "00000000000000000000.timeindex"
    index = TimeIndex(path, 0, 10 * 12)
    index.maybe_append(1000, 3)
    index.maybe_append(2000, 7)
    index.close()

    reopened = TimeIndex(path, 0, 10 * 12, writable=False)
    assert open_files_under(tmp_path) == []
    assert reopened.lookup(1500) == TimestampOffset(1000, 3)
    assert reopened.last_entry == TimestampOffset(2000, 7)
    reopened.close_handler()
    with pytest.raises(Exception):  # the mapping is gone; a read must fail, not fault
        reopened._parse_entry(reopened._mmap, 0)


def test_a_released_mapping_refuses_reads_instead_of_faulting(tmp_path):
    index = OffsetIndex(tmp_path / "00000000000000000000.index", 0, 8 * 8)
    index.append(3, 30)
    view = index._mmap
    index.close_handler()
    with pytest.raises(ValueError):
        view[0]


# ---------------------------------------------------------------------------- logs


def fill_log(log: Log, segments: int) -> None:
    # One 300-byte record per batch and 1 KiB segments: a new segment every few appends.
    while log.number_of_segments < segments:
        log.append_as_leader(make_records([b"x" * 300]), leader_epoch=0)


def test_log_holds_one_descriptor_per_segment(tmp_path):
    config = LogConfig(segment_size=1024)
    segments = 120
    log = Log(str(tmp_path / "topic-0"), config, time=MockTime())
    fill_log(log, segments)
    open_files = open_files_under(log.dir)
    assert len(open_files) == log.number_of_segments == segments
    assert suffixes(open_files) == [".log"] * segments
    log.close()
    assert open_files_under(tmp_path) == []

    # Reopened, every index sanity-checked (and so mapped); then every segment read.
    log = Log(str(tmp_path / "topic-0"), config, time=MockTime())
    try:
        assert log.number_of_segments == segments
        assert len(open_files_under(log.dir)) == segments
        records = read_all(log, isolation=FetchIsolation.LOG_END)
        assert [offset for offset, _, _ in records] == list(range(log.log_end_offset))
        assert all(segment.lazy_offset_index.is_loaded for segment in log.log_segments)
        open_files = open_files_under(log.dir)
        assert suffixes(open_files) == [".log"] * segments, "2N + 1 with descriptor-holding index maps"

        # Truncation and a roll remap indexes; still no descriptor kept for them.
        log.truncate_to(log.log_end_offset - 10)
        log.roll()
        assert suffixes(open_files_under(log.dir)) == [".log"] * log.number_of_segments
    finally:
        log.close()


def test_log_manager_holds_one_descriptor_per_segment_and_its_dir_lock(tmp_path):
    log_dir = tmp_path / "data"
    time = MockTime()
    scheduler = MockScheduler(time)
    config = LogConfig(segment_size=1024, retention_ms=-1)

    def manager() -> LogManager:
        return LogManager([str(log_dir)], config, scheduler=scheduler, time=time,
                          initial_task_delay_ms=1000, retention_check_ms=1000, flush_check_ms=1000)

    first = manager()
    first.startup()
    for partition in range(5):
        fill_log(first.get_or_create_log(TopicPartition("orders", partition), config), 20)
    first.shutdown()
    assert open_files_under(log_dir) == []

    second = manager()
    try:
        second.startup()
        segments = sum(log.number_of_segments for log in second.all_logs())
        assert segments == 100
        open_files = open_files_under(log_dir)
        assert sorted(os.path.basename(p) for p in open_files if not p.endswith(log_files.LOG_FILE_SUFFIX)) \
            == [".lock"]
        assert len(open_files) == segments + 1
    finally:
        second.shutdown()
        scheduler.shutdown()


def test_log_manager_says_when_its_segments_will_not_fit_the_descriptor_limit(tmp_path, caplog):
    log_dir = tmp_path / "data"
    time = MockTime()
    scheduler = MockScheduler(time)
    config = LogConfig(segment_size=1024, retention_ms=-1)

    def manager() -> LogManager:
        return LogManager([str(log_dir)], config, scheduler=scheduler, time=time,
                          initial_task_delay_ms=1000, retention_check_ms=1000, flush_check_ms=1000)

    first = manager()
    first.startup()
    for partition in range(2):
        fill_log(first.get_or_create_log(TopicPartition("orders", partition), config), 20)
    first.shutdown()

    caplog.set_level(logging.INFO, logger="kafka_py.log.log_manager")
    second = manager()
    try:
        second.startup()  # the limit as the test runs: room enough, no complaint
    finally:
        second.shutdown()
    assert "Found 40 segment files in 1 log dirs" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]

    # A soft limit with room for the 40 segments but not for the headroom a serving broker
    # needs on top: loading works, and the shortfall is reported before it starts.
    caplog.clear()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # Headroom for descriptors other threads of the test process may open meanwhile, still
    # well short of the 40 segments plus the serving headroom the manager asks for.
    low = len(os.listdir("/proc/self/fd")) + 150
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
    try:
        third = manager()
        try:
            third.startup()
            assert sum(log.number_of_segments for log in third.all_logs()) == 40
        finally:
            third.shutdown()
    finally:
        # restored whatever happened above: a lowered limit would fail the tests that follow
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        scheduler.shutdown()
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1, errors
    assert "found 40 segments" in errors[0] and f"the limit is {low} " in errors[0]
    loading = next(i for i, r in enumerate(caplog.records) if r.getMessage().startswith("Completed load of"))
    assert caplog.records.index(next(r for r in caplog.records if r.levelno == logging.ERROR)) < loading
