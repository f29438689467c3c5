"""One of a broker's two log dirs fails (ReplicaManager, LogManager and LogDirFailureChannel
over real files in tmp_path): what Kafka 2.8 does in ReplicaManager.handleLogDirFailure and
LogManager.handleLogDirFailure.

A dir is made to fail as Kafka's LogDirFailureTest does it: a partition's directory is
replaced by a plain file, so that the next roll cannot create its segment there; the Log
reports the OSError to the channel and the LogDirFailureHandler thread takes the dir out of
service. The other dir keeps serving; produce, fetch and ListOffsets for the failed dir's
partitions answer KAFKA_STORAGE_ERROR, including a long poll and an acks=all produce that were
waiting when the dir failed. When the second dir fails too, the LogManager halts the broker
(Exit.halt, replaced here by a procedure that records the call).
"""
from __future__ import annotations

import logging
import os
import shutil
import threading

import pytest

from kafka_py.clients.common.errors import KafkaStorageException
from kafka_py.clients.common.isolation_level import IsolationLevel
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log import Log
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_manager import LogManager
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import PartitionData
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.server.log_dir_failure_channel import LogDirFailureChannel
from kafka_py.server.metadata_cache import MetadataCache
from kafka_py.server.replica_manager import ReplicaManager
from kafka_py.server.replica_manager_types import HostedPartition
from kafka_py.core.utils.exit import Exit
from kafka_py.core.utils.kafka_scheduler import KafkaScheduler
from kafka_py.clients.common.utils.time import Time
from tests.integration.broker_harness import wait_until
from tests.log.log_test_helpers import config as log_config, make_records
from tests.server.test_replica_manager import WAIT, lai_request, partition_errors, records, um_request, values_of

A = TopicPartition("a", 0)
B = TopicPartition("b", 0)


class PropagatedLogDirEvents:
    """Stands in for KafkaZkClient where the ReplicaManager writes /log_dir_event_notification
    (the ZooKeeper side is covered by the integration tests)."""

    def __init__(self) -> None:
        self.broker_ids: list[int] = []

    def propagate_log_dir_event(self, broker_id: int) -> str:
        self.broker_ids.append(broker_id)
        return f"/log_dir_event_notification/log_dir_event_{len(self.broker_ids):010d}"

    def get_entity_configs(self, entity_type: str, entity: str) -> dict:
        return {}


class TwoDirBroker:
    """A broker's storage stack over two log dirs, wired as KafkaServer wires it."""

    def __init__(self, dirs: list[str]) -> None:
        self.dirs = [os.path.abspath(d) for d in dirs]
        self.config = KafkaConfig({"zookeeper.connect": "localhost:2181", "broker.id": "0",
                                   "log.dirs": ",".join(self.dirs)}, do_log=False)
        self.scheduler = KafkaScheduler(1, "test-scheduler-")
        self.scheduler.startup()
        self.channel = LogDirFailureChannel(len(self.dirs))
        defaults = self.config.log_config_defaults()
        self.log_manager = LogManager(self.config.log_dirs, LogConfig.from_props(defaults, {}),
                                      default_props=defaults, time=Time.SYSTEM, scheduler=self.scheduler,
                                      log_dir_failure_channel=self.channel)
        self.log_manager.startup()
        self.metadata_cache = MetadataCache(0)
        self.zk = PropagatedLogDirEvents()
        self.rm = ReplicaManager(self.config, Time.SYSTEM, self.zk, self.scheduler, self.log_manager,
                                 self.metadata_cache, self.channel)
        self.rm.startup()

    def close(self) -> None:
        self.rm.shutdown()
        self.log_manager.shutdown()
        self.scheduler.shutdown()

    def lead(self, *tps: TopicPartition, replicas=(0,)) -> dict:
        topics: dict = {}
        for tp in tps:
            topics.setdefault(tp.topic, []).append((tp.partition, 0, list(replicas)))
        self.metadata_cache.update_metadata(0, um_request(topics))
        return partition_errors(self.rm.become_leader_or_follower(1, lai_request(
            [(tp.topic, tp.partition, 0, 1, replicas, replicas) for tp in tps])))

    def produce(self, tp: TopicPartition, *values: bytes, acks: int = 1) -> object:
        answer = {}
        done = threading.Event()
        self.rm.append_records(1000, acks, False, AppendOrigin.CLIENT, {tp: records(*values)},
                               lambda r: (answer.update(r), done.set()))
        assert done.wait(WAIT)
        return answer[tp]

    def fetch(self, tp: TopicPartition, offset: int = 0):
        answer = []
        done = threading.Event()
        self.rm.fetch_messages(0, -1, 1, 1024 * 1024, False, [(tp, PartitionData(offset, 0, 1024 * 1024))], None,
                               lambda data: (answer.extend(data), done.set()), IsolationLevel.READ_UNCOMMITTED, None)
        assert done.wait(WAIT)
        return dict(answer)[tp]

    def dir_of(self, tp: TopicPartition) -> str:
        return self.log_manager.get_log(tp).parent_dir

    def fail_dir_of(self, tp: TopicPartition) -> str:
        """Replace the partition's directory by a file and roll: the roll's OSError takes the dir offline."""
        log = self.log_manager.get_log(tp)
        parent = log.parent_dir
        shutil.rmtree(log.dir)
        with open(log.dir, "w") as f:
            f.write("not a directory")
        with pytest.raises(KafkaStorageException):
            log.roll()
        wait_until(lambda: parent not in self.log_manager.live_log_dirs, WAIT, "the failed dir never went offline")
        return parent


@pytest.fixture
def halts():
    """Exit.halt records its calls instead of ending the test run."""
    calls: list[tuple[int, str]] = []
    Exit.set_halt_procedure(lambda status, message: calls.append((status, message)))
    yield calls
    Exit.reset_halt_procedure()


@pytest.fixture
def broker(tmp_path, halts):
    b = TwoDirBroker([str(tmp_path / "d0"), str(tmp_path / "d1")])
    yield b
    b.close()


def test_partitions_of_the_failed_dir_answer_kafka_storage_error_and_the_other_dir_serves(broker, halts) -> None:
    assert broker.lead(A, B) == {A: Errors.NONE, B: Errors.NONE}
    # LogManager puts each new log in the dir holding fewest: one partition per dir
    assert {broker.dir_of(A), broker.dir_of(B)} == set(broker.dirs)
    assert broker.produce(A, b"a0").error is Errors.NONE
    assert broker.produce(B, b"b0").error is Errors.NONE

    failed = broker.fail_dir_of(A)
    healthy = broker.dir_of(B)
    assert broker.log_manager.offline_log_dirs == [failed]
    assert broker.log_manager.live_log_dirs == [healthy]
    assert broker.rm.get_partition(A) is HostedPartition.OFFLINE
    assert broker.log_manager.get_log(A) is None
    assert broker.rm.offline_partition_count == 1
    # the controller is told through /log_dir_event_notification
    assert broker.zk.broker_ids == [0]

    assert broker.produce(A, b"a1").error is Errors.KAFKA_STORAGE_ERROR
    assert broker.produce(A, b"a1", acks=-1).error is Errors.KAFKA_STORAGE_ERROR
    assert broker.fetch(A).error is Errors.KAFKA_STORAGE_ERROR
    with pytest.raises(KafkaStorageException):
        broker.rm.fetch_offset_for_timestamp(A, -1, IsolationLevel.READ_UNCOMMITTED, None, True)
    assert broker.rm.last_offset_for_leader_epoch([(A, None, 1)])[A].error is Errors.KAFKA_STORAGE_ERROR
    # a LeaderAndIsr for the offline partition is refused the same way, so the controller marks it offline
    assert broker.lead(A) == {A: Errors.KAFKA_STORAGE_ERROR}

    # the other dir goes on as before
    assert broker.produce(B, b"b1").error is Errors.NONE
    assert broker.produce(B, b"b2", acks=-1).error is Errors.NONE
    assert values_of(broker.fetch(B).records) == [b"b0", b"b1", b"b2"]
    assert broker.rm.fetch_offset_for_timestamp(B, -1, IsolationLevel.READ_UNCOMMITTED, None, True).offset == 3
    # new partitions go to the live dir
    c = TopicPartition("c", 0)
    assert broker.lead(c) == {c: Errors.NONE}
    assert broker.dir_of(c) == healthy
    assert halts == []


def test_waiting_produce_and_fetch_complete_with_kafka_storage_error(broker) -> None:
    # two replicas in the ISR and a follower that never fetches: acks=all waits
    assert broker.lead(A, replicas=(0, 1)) == {A: Errors.NONE}
    produced = {}
    produce_done = threading.Event()
    broker.rm.append_records(60000, -1, False, AppendOrigin.CLIENT, {A: records(b"waits")},
                             lambda r: (produced.update(r), produce_done.set()))
    fetched = []
    fetch_done = threading.Event()
    broker.rm.fetch_messages(60000, -1, 1, 1024, False, [(A, PartitionData(1, 0, 1024))], None,
                             lambda data: (fetched.extend(data), fetch_done.set()),
                             IsolationLevel.READ_UNCOMMITTED, None)
    assert broker.rm.delayed_produce_purgatory.num_delayed() == 1
    assert broker.rm.delayed_fetch_purgatory.num_delayed() == 1
    assert not produce_done.is_set() and not fetch_done.is_set()

    broker.fail_dir_of(A)
    # answered by the failure handling, long before their 60 s timeouts
    assert produce_done.wait(WAIT) and fetch_done.wait(WAIT)
    assert produced[A].error is Errors.KAFKA_STORAGE_ERROR
    assert dict(fetched)[A].error is Errors.KAFKA_STORAGE_ERROR


def test_scheduled_tasks_skip_the_failed_dir(broker, caplog) -> None:
    assert broker.lead(A, B) == {A: Errors.NONE, B: Errors.NONE}
    assert broker.produce(A, b"a0").error is Errors.NONE
    assert broker.produce(B, b"b0").error is Errors.NONE
    failed = broker.fail_dir_of(A)
    healthy = broker.dir_of(B)
    failed_log = os.path.join(failed, "a-0")

    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        broker.rm.checkpoint_high_watermarks()
        broker.log_manager.checkpoint_log_recovery_offsets()
        broker.log_manager.checkpoint_log_start_offsets()
        broker.log_manager.flush_dirty_logs()
        broker.log_manager.cleanup_logs()
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    # the healthy dir's checkpoints are written; nothing was written in the failed one
    assert "b 0 1" in open(os.path.join(healthy, "replication-offset-checkpoint")).read()
    assert os.path.isfile(failed_log)


class HeldTasks:
    """A scheduler that only collects its tasks, so a test decides when (and whether) they run."""

    def __init__(self) -> None:
        self.tasks: list[tuple[str, object]] = []

    def schedule(self, name: str, fun, delay_ms: float = 0, period_ms: float = -1, unit_ms: bool = True):
        self.tasks.append((name, fun))

    def run(self, name: str) -> int:
        due = [fun for task, fun in self.tasks if task == name]
        for fun in due:
            fun()
        return len(due)


def test_post_roll_flush_of_a_log_whose_dir_failed_is_skipped(tmp_path, caplog) -> None:
    held = HeldTasks()
    channel = LogDirFailureChannel(1)
    log = Log(str(tmp_path / "d" / "t-0"), log_config(), scheduler=held, log_dir_failure_channel=channel)
    log.append_as_leader(make_records([b"a"]), 0)
    log.roll()
    # the dir fails before the flush that roll scheduled gets to run
    shutil.rmtree(log.dir)
    with open(log.dir, "w") as f:
        f.write("not a directory")
    with pytest.raises(KafkaStorageException):
        log.roll()
    assert channel.has_offline_log_dir(str(tmp_path / "d"))
    caplog.clear()
    assert held.run("flush-log") == 1
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_halt_when_the_last_dir_fails(broker, halts, caplog) -> None:
    assert broker.lead(A, B) == {A: Errors.NONE, B: Errors.NONE}
    broker.fail_dir_of(A)
    assert halts == []
    with caplog.at_level(logging.CRITICAL, logger="kafka_py.log.log_manager"):
        log = broker.log_manager.get_log(B)
        shutil.rmtree(log.dir)
        with open(log.dir, "w") as f:
            f.write("not a directory")
        with pytest.raises(KafkaStorageException):
            log.roll()
        wait_until(lambda: halts, WAIT, "the broker was never halted")
    message = f"Shutdown broker because all log dirs in {', '.join(broker.dirs)} have failed"
    assert halts == [(1, message)]
    assert message in caplog.text
    # the partitions were taken offline before the halt, so what is still asked is answered
    assert broker.rm.get_partition(B) is HostedPartition.OFFLINE
    assert broker.produce(B, b"late").error is Errors.KAFKA_STORAGE_ERROR


def test_channel_queues_each_dir_once(tmp_path) -> None:
    channel = LogDirFailureChannel(2)
    d0, d1 = str(tmp_path / "d0"), str(tmp_path / "d1")
    assert channel.take_next_offline_log_dir(timeout_ms=0) is None
    channel.maybe_add_offline_log_dir(d0, "first", OSError("boom"))
    channel.maybe_add_offline_log_dir(d0 + "/", "again", OSError("boom"))
    channel.maybe_add_offline_log_dir(d1, "second", OSError("boom"))
    assert channel.has_offline_log_dir(d0) and channel.has_offline_log_dir(d1)
    assert [channel.take_next_offline_log_dir(timeout_ms=0), channel.take_next_offline_log_dir(timeout_ms=0)] == [
        os.path.abspath(d0), os.path.abspath(d1)]
    assert channel.take_next_offline_log_dir(timeout_ms=0) is None
    # a wakeup ends one wait without a dir
    waiter = threading.Thread(target=channel.take_next_offline_log_dir)
    waiter.start()
    channel.wakeup()
    waiter.join(WAIT)
    assert not waiter.is_alive()
