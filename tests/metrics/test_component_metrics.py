"""Kafka's metrics of the log, the purgatories and the group metadata manager, read from the
process's registry: the values they report, and their removal with what they describe."""
from __future__ import annotations

from kafka_py.log.log import Log
from kafka_py.core.metrics.kafka_metrics_group import default_registry
from kafka_py.server.delayed_operation import DelayedOperation, DelayedOperationPurgatory
from kafka_py.clients.common.utils.time import MockTime
from tests.log.log_test_helpers import config, make_records


def gauge(mbean: str):
    metric = default_registry().find(mbean)
    return None if metric is None else metric.value()


def log_mbean(name: str, topic: str = "metrics-topic", partition: int = 3) -> str:
    return f"kafka.log:type=Log,name={name},topic={topic},partition={partition}"


def test_log_gauges_follow_the_log_and_go_with_its_deletion(tmp_path):
    log = Log(str(tmp_path / "metrics-topic-3"), config(segment_size=1024), time=MockTime())
    assert gauge(log_mbean("LogEndOffset")) == 0
    assert gauge(log_mbean("NumLogSegments")) == 1
    for i in range(20):
        log.append_as_leader(make_records([b"v" * 100]), leader_epoch=0)
    assert gauge(log_mbean("LogEndOffset")) == 20
    assert gauge(log_mbean("NumLogSegments")) == log.number_of_segments > 1
    assert gauge(log_mbean("Size")) == log.size > 2000
    assert gauge(log_mbean("LogStartOffset")) == 0

    timer = default_registry().find("kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs")
    before = timer.count
    log.flush()
    assert timer.count >= before + 1

    log.delete()
    for name in ("LogEndOffset", "NumLogSegments", "Size", "LogStartOffset"):
        assert default_registry().find(log_mbean(name)) is None


def test_a_reopened_log_owns_the_gauges_and_closing_the_old_one_leaves_them(tmp_path):
    first = Log(str(tmp_path / "a" / "metrics-topic-3"), config(), time=MockTime())
    second = Log(str(tmp_path / "b" / "metrics-topic-3"), config(), time=MockTime())
    second.append_as_leader(make_records([b"x", b"y"]), leader_epoch=0)
    first.close()
    assert gauge(log_mbean("LogEndOffset")) == 2
    second.close()
    assert default_registry().find(log_mbean("LogEndOffset")) is None


def test_future_log_is_tagged_and_renamed_to_the_current_one(tmp_path):
    future = Log(str(tmp_path / "metrics-topic-3.abc-future"), config(), time=MockTime(),
                 topic_partition=None)
    assert gauge(log_mbean("LogEndOffset") + ",is-future=true") == 0
    assert default_registry().find(log_mbean("LogEndOffset")) is None
    future.rename_dir("metrics-topic-3")
    assert default_registry().find(log_mbean("LogEndOffset") + ",is-future=true") is None
    assert gauge(log_mbean("LogEndOffset")) == 0
    future.rename_dir("metrics-topic-3.0123456789abcdef-delete")
    assert default_registry().find(log_mbean("LogEndOffset")) is None
    future.close()


class _Waiting(DelayedOperation):
    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        pass


def test_purgatory_gauges_count_watched_and_delayed_operations():
    purgatory = DelayedOperationPurgatory("MetricsTest", reaper_enabled=False)
    size = "kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize,delayedOperation=MetricsTest"
    delayed = "kafka.server:type=DelayedOperationPurgatory,name=NumDelayedOperations,delayedOperation=MetricsTest"
    try:
        assert gauge(size) == 0 and gauge(delayed) == 0
        op = _Waiting(60_000)
        assert not purgatory.try_complete_else_watch(op, ["k1", "k2"])
        assert gauge(size) == 2
        assert gauge(delayed) == 1
    finally:
        purgatory.shutdown()
    assert default_registry().find(size) is None and default_registry().find(delayed) is None


def test_log_cleaner_gauges_and_their_removal(tmp_path):
    import os

    from kafka_py.clients.common.topic_partition import TopicPartition
    from kafka_py.log.cleaner_config import CleanerConfig
    from kafka_py.log.log_cleaner import LogCleaner

    log_dir = os.path.abspath(str(tmp_path))
    cleaner = LogCleaner(CleanerConfig(num_threads=1), [log_dir], {})
    manager_tags = f"logDirectory={log_dir}"
    count = f"kafka.log:type=LogCleanerManager,name=uncleanable-partitions-count,{manager_tags}"
    try:
        for name in ("max-buffer-utilization-percent", "cleaner-recopy-percent", "max-clean-time-secs",
                     "max-compaction-delay-secs", "DeadThreadCount"):
            assert gauge(f"kafka.log:type=LogCleaner,name={name}") == 0, name
        assert gauge(count) == 0
        assert gauge(f"kafka.log:type=LogCleanerManager,name=uncleanable-bytes,{manager_tags}") == 0
        assert gauge("kafka.log:type=LogCleanerManager,name=max-dirty-percent") == 0
        cleaner.cleaner_manager.mark_partition_uncleanable(log_dir, TopicPartition("t", 0))
        assert gauge(count) == 1
        cleaner.cleaner_manager.dirtiest_log_cleanable_ratio = 0.42
        assert gauge("kafka.log:type=LogCleanerManager,name=max-dirty-percent") == 42
    finally:
        cleaner.shutdown()
    assert default_registry().find(count) is None
    assert default_registry().find("kafka.log:type=LogCleaner,name=cleaner-recopy-percent") is None
