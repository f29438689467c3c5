"""Partition (kafka_py/core/cluster/partition.py) over a real LogManager in tmp_path."""
from __future__ import annotations

import os
import threading
import time as _time

import pytest

from kafka_py.core.api.leader_and_isr import LeaderAndIsr
from kafka_py.core.cluster.partition import (
    CommittedIsr,
    FencedLeaderEpochException,
    NotEnoughReplicasException,
    Partition,
    PendingExpandIsr,
    PendingShrinkIsr,
    UnknownLeaderEpochException,
)
from kafka_py.clients.common.errors import NotLeaderOrFollowerException, OffsetOutOfRangeException, PolicyViolationException
from kafka_py.clients.common.isolation_level import IsolationLevel
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_append_info import LeaderHwChange
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_manager import LogManager
from kafka_py.log.log_offset_metadata import FetchIsolation
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import LeaderAndIsrPartitionState
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.server.checkpoints.offset_checkpoint_file import LazyOffsetCheckpoints, OffsetCheckpointFile
from kafka_py.core.utils.reentrant_read_write_lock import ReentrantReadWriteLock
from kafka_py.clients.common.utils.time import MockTime

TP = TopicPartition("t", 0)
NOW = int(_time.time() * 1000)


def records(*values: bytes, timestamp: int = NOW) -> MemoryRecords:
    return MemoryRecords(bytearray(build_batch([SimpleRecord(None, v, timestamp=timestamp) for v in values])))


def decode(file_records) -> list[bytes]:
    data = MemoryRecords(file_records.read_bytes(0, file_records.size_in_bytes()))
    return [r.value for batch in data.batches() for r in batch.records()]


def state(leader: int = 0, epoch: int = 1, replicas=(0,), isr=None) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(topic_name=TP.topic, partition_index=TP.partition, controller_epoch=1,
                                      leader=leader, leader_epoch=epoch,
                                      isr=tuple(isr if isr is not None else replicas),
                                      zk_version=0, replicas=tuple(replicas))


class RecordingAlterIsrManager:
    """Stands in for the AlterIsr manager: records the items, answers none by itself."""

    def __init__(self) -> None:
        self.items = []
        self.cleared = []

    def submit(self, item) -> bool:
        self.items.append(item)
        return True

    def clear_pending(self, tp) -> None:
        self.cleared.append(tp)


@pytest.fixture
def env(tmp_path):
    log_dir = str(tmp_path / "logs")
    topic_overrides = {"strict": {"min.insync.replicas": 2}, "compacted": {"cleanup.policy": "compact"}}
    log_manager = LogManager([log_dir], LogConfig(), topic_config_overrides=topic_overrides,
                             default_props={})
    log_manager.startup()
    checkpoints = LazyOffsetCheckpoints({os.path.abspath(log_dir): OffsetCheckpointFile(
        os.path.join(log_dir, "replication-offset-checkpoint"))})
    time = MockTime()

    def make(tp: TopicPartition = TP, alter_isr_manager=None) -> Partition:
        return Partition(tp, replica_lag_time_max_ms=10000, local_broker_id=0, time=time,
                         log_manager=log_manager, alter_isr_manager=alter_isr_manager)

    yield make, checkpoints, time, log_manager
    log_manager.shutdown()


def test_make_leader_creates_log_and_leads(env) -> None:
    make, checkpoints, _, log_manager = env
    partition = make()
    assert partition.make_leader(state(epoch=3, replicas=(0, 1), isr=(0,)), checkpoints) is True
    assert partition.is_leader and partition.leader_replica_id_opt == 0 and partition.leader_epoch == 3
    assert partition.in_sync_replica_ids == {0} and partition.assignment == (0, 1)
    assert partition.log is log_manager.get_log(TP) and os.path.isdir(partition.log.dir)
    assert [r.broker_id for r in partition.remote_replicas] == [1]
    assert partition.is_under_replicated
    # the new epoch starts at the current log end
    assert partition.log.latest_epoch == 3
    # a newer epoch with the same leader is not a new leadership
    assert partition.make_leader(state(epoch=4), checkpoints) is False
    assert partition.leader_epoch == 4 and partition.remote_replicas == []


def test_single_replica_append_moves_high_watermark_at_once(env) -> None:
    make, checkpoints, _, _ = env
    partition = make()
    partition.make_leader(state(epoch=2), checkpoints)
    info = partition.append_records_to_leader(records(b"a", b"b", b"c"), AppendOrigin.CLIENT, required_acks=1)
    assert info.first_offset.message_offset == 0 and info.last_offset == 2
    assert info.leader_hw_change is LeaderHwChange.INCREASED
    assert partition.log.high_watermark == 3 == partition.log.log_end_offset
    assert partition.check_enough_replicas_reach_offset(3) == (True, Errors.NONE)
    assert partition.check_enough_replicas_reach_offset(4) == (False, Errors.NONE)
    read = partition.read_records(0, 2, 10000, FetchIsolation.HIGH_WATERMARK, True, False)
    assert decode(read.fetched_data.records) == [b"a", b"b", b"c"]
    assert (read.high_watermark, read.log_start_offset, read.log_end_offset) == (3, 0, 3)
    # the stored batch carries the leader epoch
    assert next(partition.log.active_segment.log.batches()).partition_leader_epoch == 2


def test_follower_rejects_appends_and_leader_only_reads(env) -> None:
    make, checkpoints, _, _ = env
    partition = make()
    assert partition.make_follower(state(leader=1, epoch=1, replicas=(1, 0)), checkpoints) is True
    assert not partition.is_leader and partition.leader_replica_id_opt == 1
    assert partition.make_follower(state(leader=1, epoch=1, replicas=(1, 0)), checkpoints) is False
    with pytest.raises(NotLeaderOrFollowerException):
        partition.append_records_to_leader(records(b"x"), AppendOrigin.CLIENT, 1)
    with pytest.raises(NotLeaderOrFollowerException):
        partition.read_records(0, None, 100, FetchIsolation.HIGH_WATERMARK, True, False)
    # not from the leader only: a follower can serve reads from its own log
    assert partition.read_records(0, None, 100, FetchIsolation.HIGH_WATERMARK, False, False).high_watermark == 0
    assert partition.check_enough_replicas_reach_offset(0) == (False, Errors.NOT_LEADER_OR_FOLLOWER)


def test_leader_epoch_fencing(env) -> None:
    make, checkpoints, _, _ = env
    partition = make()
    partition.make_leader(state(epoch=5), checkpoints)
    with pytest.raises(FencedLeaderEpochException):
        partition.read_records(0, 4, 100, FetchIsolation.HIGH_WATERMARK, True, False)
    with pytest.raises(UnknownLeaderEpochException):
        partition.fetch_offset_snapshot(6, True)
    # -1 means "no epoch given"
    assert partition.fetch_offset_snapshot(-1, True).log_end_offset.message_offset == 0
    assert partition.last_offset_for_leader_epoch(4, 5, True).error is Errors.FENCED_LEADER_EPOCH
    result = partition.last_offset_for_leader_epoch(5, 5, True)
    assert (result.error, result.leader_epoch, result.end_offset) == (Errors.NONE, 5, 0)


def test_min_insync_replicas(env) -> None:
    make, checkpoints, _, _ = env
    partition = make(TopicPartition("strict", 0))
    partition.make_leader(LeaderAndIsrPartitionState("strict", 0, 1, 0, 1, (0,), 0, (0, 1)), checkpoints)
    with pytest.raises(NotEnoughReplicasException):
        partition.append_records_to_leader(records(b"x"), AppendOrigin.CLIENT, -1)
    assert partition.log.log_end_offset == 0
    # acks=1 does not need the ISR; and once written, acks=all reports it under-replicated
    partition.append_records_to_leader(records(b"x"), AppendOrigin.CLIENT, 1)
    assert partition.check_enough_replicas_reach_offset(1) == (True, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND)


def test_list_offsets(env) -> None:
    make, checkpoints, _, _ = env
    partition = make()
    partition.make_leader(state(epoch=7), checkpoints)
    partition.append_records_to_leader(records(b"a", b"b", timestamp=1000), AppendOrigin.CLIENT, 1)
    partition.append_records_to_leader(records(b"c", timestamp=2000), AppendOrigin.CLIENT, 1)
    unc = IsolationLevel.READ_UNCOMMITTED
    earliest = partition.fetch_offset_for_timestamp(-2, unc, None, True)
    latest = partition.fetch_offset_for_timestamp(-1, unc, None, True)
    assert (earliest.offset, latest.offset, latest.leader_epoch) == (0, 3, 7)
    assert partition.fetch_offset_for_timestamp(1500, unc, None, True).offset == 2
    assert partition.fetch_offset_for_timestamp(1000, IsolationLevel.READ_COMMITTED, None, True).offset == 0
    assert partition.fetch_offset_for_timestamp(5000, unc, None, True) is None
    assert partition.fetch_offset_for_timestamp(-1, None, None, True).offset == 3
    assert partition.legacy_fetch_offsets_for_timestamp(-1, 10, True, True)[0] == 3


def test_delete_records_on_leader(env) -> None:
    make, checkpoints, _, _ = env
    partition = make()
    partition.make_leader(state(), checkpoints)
    for i in range(4):
        partition.append_records_to_leader(records(b"v%d" % i), AppendOrigin.CLIENT, 1)
    result = partition.delete_records_on_leader(2)
    assert (result.requested_offset, result.low_watermark) == (2, 2)
    assert partition.log.log_start_offset == 2 == partition.log_start_offset
    with pytest.raises(OffsetOutOfRangeException):
        partition.delete_records_on_leader(10)
    # -1: up to the high watermark
    assert partition.delete_records_on_leader(-1).low_watermark == 4

    compacted = make(TopicPartition("compacted", 0))
    compacted.make_leader(LeaderAndIsrPartitionState("compacted", 0, 1, 0, 1, (0,), 0, (0,)), checkpoints)
    with pytest.raises(PolicyViolationException):
        compacted.delete_records_on_leader(0)


def test_follower_fetch_moves_high_watermark_and_expands_isr(env) -> None:
    make, checkpoints, time, _ = env
    alter = RecordingAlterIsrManager()
    partition = make(alter_isr_manager=alter)
    partition.make_leader(state(epoch=1, replicas=(0, 1), isr=(0,)), checkpoints)
    partition.append_records_to_leader(records(b"a", b"b"), AppendOrigin.CLIENT, 1)
    # follower 1 is outside the ISR and never caught up: the HW follows the leader alone
    assert partition.log.high_watermark == 2
    assert not partition.update_follower_fetch_state(7, partition.log.log_end_offset_metadata, 0,
                                                     time.milliseconds(), 2)

    leo = partition.log.log_end_offset_metadata
    assert partition.update_follower_fetch_state(1, leo, 0, time.milliseconds(), 2)
    # caught up: the leader asks the controller to add it, and counts it already
    [item] = alter.items
    assert item.leader_and_isr.isr == (0, 1) and item.leader_and_isr.leader_epoch == 1
    assert isinstance(partition.isr_state, PendingExpandIsr) and partition.isr_state.maximal_isr == {0, 1}
    item.callback(LeaderAndIsr(0, 1, (0, 1), 1))
    assert partition.isr_state == CommittedIsr(frozenset({0, 1})) and partition.get_zk_version() == 1

    # with 1 in the ISR, acks=all waits for it
    partition.append_records_to_leader(records(b"c"), AppendOrigin.CLIENT, -1)
    assert partition.log.high_watermark == 2
    assert partition.check_enough_replicas_reach_offset(3) == (False, Errors.NONE)
    partition.update_follower_fetch_state(1, partition.log.log_end_offset_metadata, 0, time.milliseconds(), 3)
    assert partition.log.high_watermark == 3
    assert partition.check_enough_replicas_reach_offset(3) == (True, Errors.NONE)

    # a follower that stops fetching while behind falls out of the ISR after replica.lag.time.max.ms
    partition.append_records_to_leader(records(b"d"), AppendOrigin.CLIENT, 1)
    partition.maybe_shrink_isr()
    assert len(alter.items) == 1
    time.sleep(10001)
    partition.maybe_shrink_isr()
    shrink = alter.items[-1]
    assert shrink.leader_and_isr.isr == (0,) and isinstance(partition.isr_state, PendingShrinkIsr)


def test_delete_forgets_state(env) -> None:
    make, checkpoints, _, _ = env
    partition = make()
    partition.make_leader(state(replicas=(0, 1)), checkpoints)
    partition.delete()
    assert partition.log is None and partition.leader_replica_id_opt is None and partition.remote_replicas == []
    with pytest.raises(NotLeaderOrFollowerException):
        partition.append_records_to_leader(records(b"x"), AppendOrigin.CLIENT, 1)


def test_read_write_lock_reentrant_reader_passes_waiting_writer() -> None:
    lock = ReentrantReadWriteLock()
    writer_waiting = threading.Event()
    writer_done = threading.Event()
    order = []

    def writer() -> None:
        writer_waiting.set()
        with lock.write():
            order.append("writer")
        writer_done.set()

    with lock.read():
        t = threading.Thread(target=writer)
        t.start()
        writer_waiting.wait(5)
        # wait until the writer is parked on the lock, then re-enter the read lock: no deadlock
        deadline = _time.monotonic() + 5
        while lock._waiting_writers == 0 and _time.monotonic() < deadline:
            _time.sleep(0.001)
        with lock.read():
            order.append("reader")
        assert not writer_done.is_set()
    assert writer_done.wait(5)
    t.join()
    assert order == ["reader", "writer"]
    with lock.write():
        with lock.read():
            with lock.write():
                pass
    with lock.read():
        with pytest.raises(RuntimeError):
            lock.acquire_write()
