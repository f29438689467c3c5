"""LogManager: directories, creation, loading, checkpoints, clean shutdown, background tasks."""
from __future__ import annotations

import os
import time

import pytest

from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log import log_files
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_manager import (
    LOG_START_OFFSET_CHECKPOINT_FILE,
    RECOVERY_POINT_CHECKPOINT_FILE,
    LogManager,
)
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile
from kafka_py.core.utils.kafka_scheduler import MockScheduler
from kafka_py.clients.common.utils.time import MockTime
from tests.log.log_test_helpers import make_records, read_all

T0 = TopicPartition("orders", 0)
T1 = TopicPartition("orders", 1)


class Env:
    def __init__(self, tmp_path, ndirs=1):
        self.dirs = [str(tmp_path / f"data{i}") for i in range(ndirs)]
        self.time = MockTime()
        self.scheduler = MockScheduler(self.time)
        self.managers = []

    def manager(self, config=None, **kwargs) -> LogManager:
        kwargs.setdefault("initial_task_delay_ms", 1000)
        kwargs.setdefault("retention_check_ms", 1000)
        kwargs.setdefault("flush_check_ms", 1000)
        kwargs.setdefault("flush_recovery_offset_checkpoint_ms", 1000)
        kwargs.setdefault("flush_start_offset_checkpoint_ms", 1000)
        manager = LogManager(self.dirs, config or LogConfig(retention_ms=-1), scheduler=self.scheduler,
                             time=self.time, **kwargs)
        self.managers.append(manager)
        return manager


@pytest.fixture
def env(tmp_path):
    e = Env(tmp_path)
    yield e
    for m in e.managers:
        if m._dir_locks:
            m.shutdown()
    e.scheduler.shutdown()


def crash(manager: LogManager) -> None:
    """What a killed broker leaves: open files dropped, no checkpoints, no marker, locks released."""
    manager._shut_down = True
    for task in manager._scheduled_tasks:
        task.cancel()
    for log in manager.all_logs():
        log.close_handlers()
    for lock in manager._dir_locks:
        lock.destroy()
    manager._dir_locks = []


def append(log, *values, epoch=0):
    return log.append_as_leader(make_records(list(values)), leader_epoch=epoch)


def test_missing_log_dirs_are_created_and_locked(tmp_path, env):
    manager = env.manager()
    for d in env.dirs:
        assert os.path.isdir(d) and os.path.exists(os.path.join(d, ".lock"))
    with pytest.raises(KafkaException, match="lock"):
        LogManager(env.dirs, LogConfig(), time=env.time)
    manager.shutdown()
    # released on shutdown: another manager may take the directory
    again = env.manager()
    again.startup()


def test_new_logs_go_to_the_directory_with_fewest_partitions(tmp_path):
    env = Env(tmp_path, ndirs=3)
    manager = env.manager()
    manager.startup()
    busy = TopicPartition("busy", 0)
    manager.maybe_update_preferred_log_dir(busy, env.dirs[0])
    manager.get_or_create_log(busy)
    placed = [manager.get_or_create_log(TopicPartition("t", p)).parent_dir for p in range(5)]
    counts = {d: placed.count(d) for d in env.dirs}
    assert counts[env.dirs[0]] == 1 and counts[env.dirs[1]] == 2 and counts[env.dirs[2]] == 2
    assert manager.get_or_create_log(TopicPartition("t", 0)) is manager.get_log(TopicPartition("t", 0))
    manager.shutdown()
    env.scheduler.shutdown()


def test_clean_shutdown_round_trip(env):
    manager = env.manager()
    manager.startup()
    log0 = manager.get_or_create_log(T0)
    log1 = manager.get_or_create_log(T1)
    for i in range(5):
        append(log0, b"a%d" % i)
    append(log1, b"b")
    log0.update_high_watermark(log0.log_end_offset)
    log0.maybe_increment_log_start_offset(2)
    manager.shutdown()

    d = env.dirs[0]
    assert os.path.exists(os.path.join(d, ".kafka_cleanshutdown"))
    recovery = OffsetCheckpointFile(os.path.join(d, RECOVERY_POINT_CHECKPOINT_FILE)).read()
    starts = OffsetCheckpointFile(os.path.join(d, LOG_START_OFFSET_CHECKPOINT_FILE)).read()
    assert recovery == {T0: 5, T1: 1}
    assert starts == {T0: 2}  # only where it differs from the first segment's base offset

    restarted = env.manager()
    restarted.startup()
    assert not os.path.exists(os.path.join(d, ".kafka_cleanshutdown"))  # read, then removed
    again = restarted.get_log(T0)
    assert (again.log_start_offset, again.log_end_offset, again.recovery_point) == (2, 5, 5)
    assert [v for _, _, v in read_all(again)] == [b"a2", b"a3", b"a4"]
    assert [v for _, _, v in read_all(restarted.get_log(T1))] == [b"b"]


def test_unclean_start_recovers_and_drops_torn_tail(env):
    manager = env.manager()
    manager.startup()
    log = manager.get_or_create_log(T0)
    for i in range(4):
        append(log, b"v%d" % i)
    path = log.active_segment.log.file
    # a crash: no shutdown, no marker; then the last batch is torn
    crash(manager)
    os.truncate(path, os.path.getsize(path) - 7)
    restarted = env.manager()
    restarted.startup()
    recovered = restarted.get_log(T0)
    assert recovered.log_end_offset == 3
    assert [v for _, _, v in read_all(recovered)] == [b"v0", b"v1", b"v2"]


def test_background_tasks_retention_flush_and_checkpoints(env):
    config = LogConfig(segment_size=200, retention_size=300, retention_ms=-1, flush_ms=500)
    manager = env.manager(config)
    manager.startup()
    assert {task.name for task in manager._scheduled_tasks} == {
        "kafka-log-retention", "kafka-log-flusher", "kafka-recovery-point-checkpoint",
        "kafka-log-start-offset-checkpoint"}  # plus the self-rescheduling kafka-delete-logs
    log = manager.get_or_create_log(T0)
    for i in range(12):
        append(log, b"x" * 60)
    log.update_high_watermark(log.log_end_offset)
    segments = log.number_of_segments
    assert log.recovery_point < log.log_end_offset or log.number_of_segments > 1
    env.time.sleep(1001)  # all periodic tasks are due
    assert log.number_of_segments < segments          # kafka-log-retention
    assert log.log_start_offset > 0
    assert log.recovery_point == log.log_end_offset   # kafka-log-flusher
    recovery = OffsetCheckpointFile(os.path.join(env.dirs[0], RECOVERY_POINT_CHECKPOINT_FILE)).read()
    assert recovery[T0] == log.log_end_offset         # kafka-recovery-point-checkpoint
    starts = OffsetCheckpointFile(os.path.join(env.dirs[0], LOG_START_OFFSET_CHECKPOINT_FILE)).read()
    assert starts.get(T0, log.log_segments[0].base_offset) == log.log_start_offset


def test_async_delete_renames_then_removes_directory(env):
    manager = env.manager(LogConfig(file_delete_delay_ms=5000, retention_ms=-1))
    manager.startup()
    log = manager.get_or_create_log(T0)
    append(log, b"doomed")
    removed = manager.async_delete(T0)
    assert removed is log and manager.get_log(T0) is None
    name = os.path.basename(removed.dir)
    assert name.startswith("orders-0.") and name.endswith("-delete")
    assert os.path.isdir(removed.dir)
    assert manager.has_logs_to_be_deleted
    env.time.sleep(1000)   # kafka-delete-logs runs, but the delay has not passed
    assert os.path.isdir(removed.dir)
    env.time.sleep(5000)
    assert not os.path.exists(removed.dir)
    assert not manager.has_logs_to_be_deleted
    assert manager.async_delete(T0) is None


def test_leftover_delete_dirs_are_removed_after_restart(env):
    manager = env.manager(LogConfig(file_delete_delay_ms=100, retention_ms=-1))
    manager.startup()
    log = manager.get_or_create_log(T0)
    append(log, b"x")
    manager.async_delete(T0)
    doomed = log.dir
    manager.shutdown()
    assert os.path.isdir(doomed)
    restarted = env.manager(LogConfig(file_delete_delay_ms=100, retention_ms=-1))
    restarted.startup()
    assert restarted.get_log(T0) is None
    env.time.sleep(1000)
    assert not os.path.exists(doomed)


def test_topic_config_overrides(env):
    manager = env.manager(topic_config_overrides={"big": {"max.message.bytes": "100000"}})
    manager.startup()
    big = manager.get_or_create_log(TopicPartition("big", 0))
    small = manager.get_or_create_log(T0)
    assert big.config.max_message_size == 100000
    assert small.config.max_message_size == LogConfig().max_message_size
    manager.update_topic_config("orders", {"retention.ms": "1234"})
    assert small.config.retention_ms == 1234 and big.config.retention_ms != 1234
    manager.update_topic_config("orders", {})
    assert small.config.retention_ms == manager.current_default_config.retention_ms == -1


def test_topic_overrides_are_kept_only_while_the_topic_has_logs_here(env):
    """A broker that sees topics created and deleted for months keeps no config of them."""
    manager = env.manager()
    manager.startup({"hosted": {"retention.ms": "1000"}, "elsewhere": {"retention.ms": "2000"}})
    # loaded at startup for every topic of the cluster; only topics with logs here keep them
    assert "elsewhere" not in manager._topic_overrides
    tps = [TopicPartition("hosted", p) for p in range(2)]
    for tp in tps:
        manager.update_topic_config(tp.topic, {"retention.ms": "1000"})
        assert manager.get_or_create_log(tp).config.retention_ms == 1000
    # a change notification of a topic this broker hosts nothing of is not remembered
    manager.update_topic_config("elsewhere", {"retention.ms": "3000"}, only_if_hosted=True)
    assert "elsewhere" not in manager._topic_overrides
    manager.update_topic_config("hosted", {"retention.ms": "4000"}, only_if_hosted=True)
    assert all(manager.get_log(tp).config.retention_ms == 4000 for tp in tps)
    manager.async_delete(tps[0])
    assert "hosted" in manager._topic_overrides
    manager.async_delete_partitions([tps[1]], lambda tp, e: None)
    assert "hosted" not in manager._topic_overrides


def test_truncate_through_manager_checkpoints_recovery_point(env):
    manager = env.manager()
    manager.startup()
    log = manager.get_or_create_log(T0)
    for i in range(6):
        append(log, b"v")
    log.flush()
    manager.truncate_to({T0: 2})
    assert log.log_end_offset == 2
    recovery = OffsetCheckpointFile(os.path.join(env.dirs[0], RECOVERY_POINT_CHECKPOINT_FILE)).read()
    assert recovery[T0] == 2
    manager.truncate_fully_and_start_at(T0, 50)
    assert (log.log_start_offset, log.log_end_offset) == (50, 50)


def test_load_uses_several_recovery_threads(tmp_path):
    env = Env(tmp_path, ndirs=2)
    manager = env.manager(recovery_threads_per_data_dir=3)
    manager.startup()
    tps = [TopicPartition("many", p) for p in range(8)]
    for tp in tps:
        append(manager.get_or_create_log(tp), b"%d" % tp.partition)
    manager.shutdown()
    restarted = env.manager(recovery_threads_per_data_dir=3)
    restarted.startup()
    assert sorted(log.topic_partition for log in restarted.all_logs()) == tps
    for tp in tps:
        assert [v for _, _, v in read_all(restarted.get_log(tp))] == [b"%d" % tp.partition]
    restarted.shutdown()
    env.scheduler.shutdown()


def test_restart_recovers_only_what_lies_past_each_recovery_point(env, caplog):
    """A clean restart recovers nothing; after a crash, only the segments past each log's
    recovery point are recovered; the loading lines say how many logs, in how long."""
    import logging

    config = LogConfig(retention_ms=-1, segment_size=1024)
    manager = env.manager(config, recovery_threads_per_data_dir=2)
    manager.startup()
    tps = [TopicPartition("orders", p) for p in range(6)]
    for tp in tps:
        log = manager.get_or_create_log(tp)
        for i in range(30):
            append(log, b"value-%d" % i * 8)
    flushed = tps[:3]
    for tp in flushed:
        manager.get_log(tp).flush()
    manager.checkpoint_log_recovery_offsets()
    checkpointed = OffsetCheckpointFile(os.path.join(env.dirs[0], RECOVERY_POINT_CHECKPOINT_FILE)).read()
    # what recovery must redo: the segments holding offsets at or past the recovery point
    past_recovery_point = {tp: len(list(manager.get_log(tp)._segments.range(checkpointed.get(tp, 0), 2**63 - 1)))
                           for tp in tps}
    segments = {tp: manager.get_log(tp).number_of_segments for tp in tps}
    assert all(n > 3 for n in segments.values())
    assert all(past_recovery_point[tp] < segments[tp] for tp in flushed)
    crash(manager)

    with caplog.at_level(logging.INFO, logger="kafka_py.log"):
        restarted = env.manager(config, recovery_threads_per_data_dir=2)
        restarted.startup()
    recovered = {tp: restarted.get_log(tp).recovered_segments for tp in tps}
    assert recovered == past_recovery_point
    assert all(read_all(restarted.get_log(tp)) for tp in tps)
    assert "Logs loading complete in" in caplog.text and "Loaded 6 logs in" in caplog.text
    assert f"(unclean shutdown): recovered {sum(recovered.values())} segments of" in caplog.text
    restarted.shutdown()

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="kafka_py.log"):
        clean = env.manager(config, recovery_threads_per_data_dir=2)
        clean.startup()
    assert all(clean.get_log(tp).recovered_segments == 0 for tp in tps)
    assert "(clean shutdown): recovered 0 segments of 0 logs" in caplog.text


def _crash_in_the_middle_of_a_move(env, appended_after_swap: int = 0, future_tail_lost: int = 0) -> tuple[str, str]:
    """orders-0 moved from data0 to data1 and the broker killed right after the swap renamed the
    caught-up future log ``orders-0`` (replace_current_with_future_log's first step), before the
    source became ``-delete``: both dirs hold ``orders-0``. Returns the two partition directories."""
    manager = env.manager(LogConfig(retention_ms=-1, file_delete_delay_ms=100))
    manager.startup()
    manager.maybe_update_preferred_log_dir(T0, env.dirs[0])
    source = manager.get_or_create_log(T0)
    manager.maybe_update_preferred_log_dir(T0, env.dirs[1])
    future = manager.get_or_create_log(T0, is_future=True)
    assert source.parent_dir == env.dirs[0] and future.parent_dir == env.dirs[1]
    for base in range(0, 30, 10):
        values = [b"record-%d" % i for i in range(base, base + 10)]
        source.append_as_follower(make_records(values, base_offset=base))
        future.append_as_follower(make_records(values, base_offset=base))
    manager.checkpoint_log_recovery_offsets()
    # past the file system's timestamp granularity, so that the rename is seen as the later change
    time.sleep(0.05)
    future.rename_dir(log_files.log_dir_name(T0))
    if appended_after_swap:
        # the new current log took appends; the source's dir failed before its rename
        values = [b"record-%d" % i for i in range(30, 30 + appended_after_swap)]
        future.append_as_follower(make_records(values, base_offset=30))
    if future_tail_lost:
        # the promoted copy's last batch never reached the disk
        future.truncate_to(30 - future_tail_lost)
    crash(manager)
    return source.dir, future.dir


@pytest.mark.parametrize("case", ["tie", "promoted copy longer", "source longer"])
def test_a_partition_in_two_log_dirs_keeps_one_copy(tmp_path, caplog, case):
    """Kafka refuses to start when two log dirs hold the same partition; here the longer copy
    stays (on a tie the one renamed last, which the swap had promoted), the other is deleted,
    and a WARN names both."""
    import logging

    env = Env(tmp_path, ndirs=2)
    try:
        source_dir, dest_dir = _crash_in_the_middle_of_a_move(
            env, appended_after_swap=5 if case == "promoted copy longer" else 0,
            future_tail_lost=10 if case == "source longer" else 0)
        assert os.path.basename(source_dir) == os.path.basename(dest_dir) == "orders-0"
        kept_dir, dropped_dir = (source_dir, dest_dir) if case == "source longer" else (dest_dir, source_dir)
        expected = {"tie": 30, "promoted copy longer": 35, "source longer": 30}[case]
        with caplog.at_level(logging.WARNING, logger="kafka_py.log.log_manager"):
            restarted = env.manager(LogConfig(retention_ms=-1, file_delete_delay_ms=100))
            restarted.startup()
        log = restarted.get_log(T0)
        assert log.dir == kept_dir
        assert [v for _, _, v in read_all(log)] == [b"record-%d" % i for i in range(expected)]
        assert restarted.get_log(T0, is_future=True) is None
        warning = [r.getMessage() for r in caplog.records if "Duplicate log directories" in r.getMessage()]
        assert len(warning) == 1 and source_dir in warning[0] and dest_dir in warning[0], warning
        dropped_parent = os.path.dirname(dropped_dir)
        assert not os.path.exists(dropped_dir)
        doomed = [n for n in os.listdir(dropped_parent) if n.startswith("orders-0.") and n.endswith("-delete")]
        assert len(doomed) == 1
        env.time.sleep(1000)
        assert not [n for n in os.listdir(dropped_parent) if n.startswith("orders-0")]
        # the next start finds a single copy
        restarted.shutdown()
        again = env.manager(LogConfig(retention_ms=-1))
        again.startup()
        assert again.get_log(T0).dir == kept_dir
        assert len(read_all(again.get_log(T0))) == expected
    finally:
        for m in env.managers:
            if m._dir_locks:
                m.shutdown()
        env.scheduler.shutdown()
