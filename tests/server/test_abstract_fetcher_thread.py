"""AbstractFetcherThread (server/abstract_fetcher_thread.py): its decisions as pure functions,
and its state machine driven round by round (``do_work`` on the test's thread) between two
real Logs in tmp_path, as Kafka's AbstractFetcherThreadTest drives its MockFetcherThread.

``LocalFetcherThread`` fills in the I/O hooks: the "leader" is a Log read directly, answering
OffsetsForLeaderEpoch from its leader epoch cache and fetches from Log.read, and the follower
is a Log appended to with ``append_as_follower``. Batches are built with explicit offsets and
partition leader epochs, as a leader writes them, so every test can compare the follower's
bytes with the leader's.
"""
from __future__ import annotations

import time as _time
from typing import Callable, Optional

import pytest

from kafka_py.clients.common.errors import OffsetOutOfRangeException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log import FetchIsolation, Log
from kafka_py.log.log_config import LogConfig
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, EpochEndOffset, PartitionData
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.server.abstract_fetcher_manager import InitialFetchState, fetcher_id_for
from kafka_py.server.abstract_fetcher_thread import (
    AbstractFetcherThread,
    FailedPartitions,
    OffsetAndEpoch,
    OffsetTruncationState,
    PartitionFetchState,
    ReplicaFetch,
    ReplicaState,
    ResultWithPartitions,
    get_offset_truncation_state,
    out_of_range_reset,
)
from kafka_py.server.replica_manager_types import FetchPartitionData
from kafka_py.core.utils.delayed_item import DelayedItem
from kafka_py.clients.common.utils.time import MockTime

TP = TopicPartition("t", 0)
NOW = int(_time.time() * 1000)


# ---------------------------------------------------------------------------- pure decisions


def epochs(*entries: tuple[int, int]) -> Callable[[int], Optional[OffsetAndEpoch]]:
    """A follower's end_offset_for_epoch over (epoch, start offset) entries and log end 100."""

    def end_offset_for_epoch(requested: int) -> Optional[OffsetAndEpoch]:
        floor = [(e, s) for e, s in entries if e <= requested]
        if not floor:
            return None
        epoch, _ = floor[-1]
        later = [s for e, s in entries if e > epoch]
        return OffsetAndEpoch(later[0] if later else 100, epoch)

    return end_offset_for_epoch


def leader(epoch: int, end_offset: int) -> EpochEndOffset:
    return EpochEndOffset(Errors.NONE, TP.partition, epoch, end_offset)


def test_truncation_to_the_smaller_end_of_the_same_epoch() -> None:
    # both logs know epoch 2; the leader's ends at 40, the follower's at 100 (its log end)
    state = get_offset_truncation_state(TP, leader(2, 40), 30, 100, epochs((0, 0), (2, 20)))
    assert state == OffsetTruncationState(40, True)
    # the follower's own epoch may end first
    state = get_offset_truncation_state(TP, leader(2, 90), 30, 100, epochs((0, 0), (2, 20), (3, 50)))
    assert state == OffsetTruncationState(50, True)


def test_truncation_never_past_the_follower_log_end() -> None:
    state = get_offset_truncation_state(TP, leader(2, 150), 30, 70, epochs((0, 0), (2, 20)))
    assert state == OffsetTruncationState(70, True)


def test_an_epoch_unknown_to_the_follower_truncates_part_way_and_asks_again() -> None:
    # KIP-279: the leader answers epoch 2, which the follower never had; it truncates to the end
    # of its largest epoch below 2 (epoch 1, ending where its epoch 3 starts) and asks again
    state = get_offset_truncation_state(TP, leader(2, 60), 30, 100, epochs((0, 0), (1, 20), (3, 45)))
    assert state == OffsetTruncationState(45, False)


def test_an_epoch_older_than_any_the_follower_has_trusts_the_leader_offset() -> None:
    state = get_offset_truncation_state(TP, leader(1, 25), 30, 100, epochs((3, 10)))
    assert state == OffsetTruncationState(25, True)


def test_no_end_offset_from_the_leader_falls_back_to_the_high_watermark() -> None:
    state = get_offset_truncation_state(TP, EpochEndOffset(Errors.NONE, 0, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET),
                                        30, 100, epochs((0, 0)))
    assert state == OffsetTruncationState(30, True)


def test_an_end_offset_without_epoch_is_used_as_it_is() -> None:
    # a leader answering OffsetForLeaderEpoch v0 says no epoch
    state = get_offset_truncation_state(TP, EpochEndOffset(Errors.NONE, 0, UNDEFINED_EPOCH, 42), 30, 100,
                                        epochs((0, 0)))
    assert state == OffsetTruncationState(42, True)


def test_out_of_range_with_a_shorter_leader_log_truncates_to_its_end() -> None:
    asked = []
    reset = out_of_range_reset(TP, replica_end_offset=50, leader_end_offset=30,
                               fetch_leader_start_offset=lambda: asked.append(1) or 0)
    assert (reset.fetch_offset, reset.truncate_to, reset.truncate_fully_and_start_at) == (30, 30, None)
    assert not asked  # the leader's start offset is not needed then


def test_out_of_range_below_the_leader_log_start_restarts_the_log_there() -> None:
    reset = out_of_range_reset(TP, replica_end_offset=10, leader_end_offset=500,
                               fetch_leader_start_offset=lambda: 200)
    assert (reset.fetch_offset, reset.truncate_to, reset.truncate_fully_and_start_at, reset.lag) == (200, None, 200,
                                                                                                     300)


def test_out_of_range_within_the_leader_log_keeps_the_follower_log() -> None:
    reset = out_of_range_reset(TP, replica_end_offset=300, leader_end_offset=500,
                               fetch_leader_start_offset=lambda: 200)
    assert (reset.fetch_offset, reset.truncate_to, reset.truncate_fully_and_start_at) == (300, None, None)


def test_partition_fetch_state_flags() -> None:
    time = MockTime()
    fetching = PartitionFetchState.of(5, None, 1, ReplicaState.FETCHING, 0)
    assert fetching.is_ready_for_fetch and not fetching.is_truncating and not fetching.is_replica_in_sync
    truncating = PartitionFetchState.of(5, 0, 1, ReplicaState.TRUNCATING, None)
    assert truncating.is_truncating and not truncating.is_ready_for_fetch and truncating.is_replica_in_sync
    delayed = PartitionFetchState(5, None, 1, DelayedItem(100, time), ReplicaState.FETCHING, 0)
    assert delayed.is_delayed and not delayed.is_ready_for_fetch
    time.advance(100)
    assert not delayed.is_delayed and delayed.is_ready_for_fetch


def test_fetcher_id_is_kafka_hash_of_topic_and_partition() -> None:
    # Java: "a".hashCode() == 97, so 31 * 97 + p
    assert fetcher_id_for(TopicPartition("a", 0), 7) == 3007 % 7
    assert fetcher_id_for(TopicPartition("a", 5), 7) == 3012 % 7
    # "polygenelubricants".hashCode() == Integer.MIN_VALUE; 31 * MIN_VALUE wraps to MIN_VALUE,
    # plus partition 0 stays MIN_VALUE, whose Utils.abs is 0
    assert fetcher_id_for(TopicPartition("polygenelubricants", 0), 3) == 0
    assert {fetcher_id_for(TopicPartition("orders", p), 1) for p in range(10)} == {0}


# ---------------------------------------------------------------------------- the state machine


def write_leader_batch(log: Log, epoch: int, count: int, tag: str) -> None:
    """Append ``count`` records as one batch at the log end in leader epoch ``epoch``."""
    base = log.log_end_offset
    batch = build_batch([SimpleRecord(None, f"{tag}-{base + i}".encode(), timestamp=NOW) for i in range(count)],
                        base_offset=base, partition_leader_epoch=epoch)
    log.append_as_follower(MemoryRecords(bytearray(batch)))


def batches_of(log: Log) -> list[bytes]:
    info = log.read(log.log_start_offset, 1 << 24, FetchIsolation.LOG_END, min_one_message=True)
    data = MemoryRecords(info.records.read_bytes(0, info.records.size_in_bytes()))
    return [bytes(b.buffer) for b in data.batches()]


class LocalFetcherThread(AbstractFetcherThread):
    """The hooks over two local Logs; the leader side answers as a leader's Partition would."""

    def __init__(self, leader_log: Log, follower_log: Log, leader_epoch: int, time: MockTime,
                 truncation_on_fetch: bool = False) -> None:
        super().__init__("LocalFetcher", "local", None, FailedPartitions(), fetch_back_off_ms=10, time=time)
        self.leader_log = leader_log
        self.follower_log = follower_log
        self.leader_epoch = leader_epoch
        self._truncation_on_fetch = truncation_on_fetch
        self.fetch_failure: Optional[Exception] = None
        self.fetch_error = Errors.NONE
        self.epoch_requests: list[dict] = []
        self.truncations: list[OffsetTruncationState] = []

    is_offset_for_leader_epoch_supported = True

    @property
    def is_truncation_on_fetch_supported(self) -> bool:
        return self._truncation_on_fetch

    # the follower
    def latest_epoch(self, tp): return self.follower_log.latest_epoch
    def log_start_offset(self, tp): return self.follower_log.log_start_offset
    def log_end_offset(self, tp): return self.follower_log.log_end_offset

    def end_offset_for_epoch(self, tp, epoch):
        found = self.follower_log.end_offset_for_epoch(epoch)
        return None if found is None else OffsetAndEpoch(*found)

    def process_partition_data(self, tp, fetch_offset, partition_data):
        assert fetch_offset == self.follower_log.log_end_offset
        info = self.follower_log.append_as_follower(MemoryRecords(partition_data.records))
        self.follower_log.update_high_watermark(partition_data.high_watermark)
        return info

    def truncate(self, tp, truncation_state):
        self.truncations.append(truncation_state)
        self.follower_log.truncate_to(truncation_state.offset)

    def truncate_fully_and_start_at(self, tp, offset):
        self.follower_log.truncate_fully_and_start_at(offset)

    def build_fetch(self, partition_map):
        data = {tp: PartitionData(s.fetch_offset, 0, 1 << 20, s.current_leader_epoch,
                                  s.last_fetched_epoch if self._truncation_on_fetch else None)
                for tp, s in partition_map.items() if s.is_ready_for_fetch}
        return ResultWithPartitions(ReplicaFetch(data, data) if data else None, frozenset())

    # the leader
    def _fenced(self, current_leader_epoch: int) -> Errors:
        if current_leader_epoch < self.leader_epoch:
            return Errors.FENCED_LEADER_EPOCH
        if current_leader_epoch > self.leader_epoch:
            return Errors.UNKNOWN_LEADER_EPOCH
        return Errors.NONE

    def fetch_epoch_end_offsets(self, partitions):
        self.epoch_requests.append(dict(partitions))
        result = {}
        for tp, data in partitions.items():
            error = self._fenced(data.current_leader_epoch)
            if error is not Errors.NONE:
                result[tp] = EpochEndOffset(error, tp.partition)
                continue
            found = self.leader_log.end_offset_for_epoch(data.leader_epoch)
            result[tp] = (EpochEndOffset(Errors.NONE, tp.partition) if found is None
                          else EpochEndOffset(Errors.NONE, tp.partition, found[1], found[0]))
        return result

    def fetch_from_leader(self, fetch_request):
        if self.fetch_failure is not None:
            raise self.fetch_failure
        log = self.leader_log
        result = {}
        for tp, data in fetch_request.items():
            error = self.fetch_error if self.fetch_error is not Errors.NONE else self._fenced(data.current_leader_epoch)
            if error is not Errors.NONE:
                result[tp] = FetchPartitionData(error, -1, -1, MemoryRecords.EMPTY.buffer)
                continue
            if data.last_fetched_epoch is not None:
                found = log.end_offset_for_epoch(data.last_fetched_epoch)
                if found is not None and (found[1] < data.last_fetched_epoch or found[0] < data.fetch_offset):
                    result[tp] = FetchPartitionData(Errors.NONE, log.high_watermark, log.log_start_offset,
                                                    MemoryRecords.EMPTY.buffer,
                                                    EpochEndOffset(Errors.NONE, tp.partition, found[1], found[0]))
                    continue
            try:
                info = log.read(data.fetch_offset, data.max_bytes, FetchIsolation.LOG_END, min_one_message=True)
            except OffsetOutOfRangeException:
                result[tp] = FetchPartitionData(Errors.OFFSET_OUT_OF_RANGE, -1, -1, MemoryRecords.EMPTY.buffer)
                continue
            records = info.records
            raw = records.read_bytes(0, records.size_in_bytes()) if hasattr(records, "read_bytes") else b""
            result[tp] = FetchPartitionData(Errors.NONE, log.high_watermark, log.log_start_offset, memoryview(raw))
        return result

    def fetch_earliest_offset_from_leader(self, tp, current_leader_epoch):
        return self.leader_log.log_start_offset

    def fetch_latest_offset_from_leader(self, tp, current_leader_epoch):
        return self.leader_log.log_end_offset


@pytest.fixture
def logs(tmp_path):
    time = MockTime()
    made = []

    def make(name: str) -> Log:
        log = Log(str(tmp_path / f"{name}-0"), LogConfig(), time=time, topic_partition=TP)
        made.append(log)
        return log

    yield time, make
    for log in made:
        log.close()


def run_until(thread: LocalFetcherThread, done: Callable[[], bool], rounds: int = 20) -> None:
    for _ in range(rounds):
        if done():
            return
        thread.do_work()
    assert done(), thread.fetch_state(TP)


def test_truncating_follower_cuts_its_divergent_epoch_then_fetches_the_leader_records(logs) -> None:
    time, make = logs
    leader_log, follower_log = make("leader"), make("follower")
    for log in (leader_log, follower_log):
        write_leader_batch(log, 0, 5, "e0")
    write_leader_batch(follower_log, 1, 5, "lost")  # epoch 1 never reached the new leader
    write_leader_batch(leader_log, 2, 7, "e2")
    thread = LocalFetcherThread(leader_log, follower_log, leader_epoch=2, time=time)
    thread.add_partitions({TP: InitialFetchState(None, 2, follower_log.log_end_offset)})
    assert thread.fetch_state(TP).state is ReplicaState.TRUNCATING

    thread.do_work()
    # asked about epoch 1; the leader's largest epoch <= 1 is 0, ending at 5
    assert [r[TP].leader_epoch for r in thread.epoch_requests] == [1]
    assert thread.truncations == [OffsetTruncationState(5, True)]
    run_until(thread, lambda: follower_log.log_end_offset == leader_log.log_end_offset)
    assert batches_of(follower_log) == batches_of(leader_log)
    assert follower_log.high_watermark == leader_log.high_watermark


def test_an_epoch_the_follower_never_had_takes_two_rounds(logs) -> None:
    time, make = logs
    leader_log, follower_log = make("leader"), make("follower")
    for log in (leader_log, follower_log):
        write_leader_batch(log, 0, 5, "e0")
    write_leader_batch(follower_log, 1, 5, "e1")
    write_leader_batch(follower_log, 3, 5, "e3")
    write_leader_batch(leader_log, 2, 8, "e2")
    write_leader_batch(leader_log, 4, 3, "e4")
    thread = LocalFetcherThread(leader_log, follower_log, leader_epoch=4, time=time)
    thread.add_partitions({TP: InitialFetchState(None, 4, follower_log.log_end_offset)})

    thread.do_work()
    # epoch 3 ends (for the leader) in epoch 2, which the follower lacks: cut to the end of its
    # epoch 1 and ask about that one
    assert thread.truncations == [OffsetTruncationState(10, False)]
    assert thread.fetch_state(TP).state is ReplicaState.TRUNCATING
    thread.do_work()
    assert [r[TP].leader_epoch for r in thread.epoch_requests] == [3, 1]
    assert thread.truncations[1] == OffsetTruncationState(5, True)
    run_until(thread, lambda: follower_log.log_end_offset == leader_log.log_end_offset)
    assert batches_of(follower_log) == batches_of(leader_log)


def test_truncation_on_fetch_follows_the_diverging_epoch(logs) -> None:
    time, make = logs
    leader_log, follower_log = make("leader"), make("follower")
    for log in (leader_log, follower_log):
        write_leader_batch(log, 0, 5, "e0")
    write_leader_batch(follower_log, 1, 4, "lost")
    write_leader_batch(leader_log, 2, 6, "e2")
    thread = LocalFetcherThread(leader_log, follower_log, leader_epoch=2, time=time, truncation_on_fetch=True)
    thread.add_partitions({TP: InitialFetchState(None, 2, follower_log.log_end_offset)})
    # it knows its epochs, so it fetches at once, sending the epoch of its last batch
    state = thread.fetch_state(TP)
    assert (state.state, state.last_fetched_epoch, state.fetch_offset) == (ReplicaState.FETCHING, 1, 9)

    thread.do_work()
    assert thread.truncations == [OffsetTruncationState(5, True)]
    assert not thread.epoch_requests
    run_until(thread, lambda: follower_log.log_end_offset == leader_log.log_end_offset)
    assert batches_of(follower_log) == batches_of(leader_log)


def test_a_log_without_epochs_truncates_to_its_high_watermark(logs) -> None:
    time, make = logs
    leader_log, follower_log = make("leader"), make("follower")
    write_leader_batch(leader_log, -1, 5, "old")
    follower_log.append_as_follower(MemoryRecords(bytearray(build_batch(
        [SimpleRecord(None, b"x", timestamp=NOW)] * 8, base_offset=0, partition_leader_epoch=-1))))
    assert follower_log.latest_epoch is None
    thread = LocalFetcherThread(leader_log, follower_log, leader_epoch=0, time=time)
    thread.add_partitions({TP: InitialFetchState(None, 0, 3)})  # 3: its high watermark
    thread.do_work()
    assert thread.truncations == [OffsetTruncationState(3, True)] and not thread.epoch_requests
    assert follower_log.log_end_offset == 3


def test_a_fenced_epoch_parks_the_partition_until_the_next_leader_and_isr(logs) -> None:
    time, make = logs
    leader_log, follower_log = make("leader"), make("follower")
    write_leader_batch(leader_log, 3, 5, "e3")
    thread = LocalFetcherThread(leader_log, follower_log, leader_epoch=3, time=time, truncation_on_fetch=True)
    thread.add_partitions({TP: InitialFetchState(None, 2, 0)})  # this follower still thinks epoch 2
    run_until(thread, lambda: thread.fetch_state(TP) is None)
    assert thread.failed_partitions.contains(TP) and follower_log.log_end_offset == 0
    # the LeaderAndIsr of epoch 3 adds it back
    thread.add_partitions({TP: InitialFetchState(None, 3, 0)})
    assert not thread.failed_partitions.contains(TP)
    run_until(thread, lambda: follower_log.log_end_offset == 5)


def test_retriable_errors_and_failed_requests_back_the_partition_off(logs) -> None:
    time, make = logs
    leader_log, follower_log = make("leader"), make("follower")
    write_leader_batch(leader_log, 0, 5, "e0")
    thread = LocalFetcherThread(leader_log, follower_log, leader_epoch=0, time=time, truncation_on_fetch=True)
    thread.add_partitions({TP: InitialFetchState(None, 0, 0)})
    for failure in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.UNKNOWN_LEADER_EPOCH, ConnectionError("gone")):
        if isinstance(failure, Errors):
            thread.fetch_error, thread.fetch_failure = failure, None
        else:
            thread.fetch_error, thread.fetch_failure = Errors.NONE, failure
        thread.do_work()
        assert thread.fetch_state(TP).is_delayed, failure
        assert follower_log.log_end_offset == 0
        # delayed: the next round sends nothing
        thread.do_work()
        assert follower_log.log_end_offset == 0
        time.advance(thread.fetch_back_off_ms)
    thread.fetch_error, thread.fetch_failure = Errors.NONE, None
    run_until(thread, lambda: follower_log.log_end_offset == 5)


def test_out_of_range_restarts_a_follower_left_behind_the_leader_log_start(logs) -> None:
    time, make = logs
    leader_log, follower_log = make("leader"), make("follower")
    write_leader_batch(leader_log, 0, 10, "e0")
    write_leader_batch(leader_log, 0, 10, "e0")
    leader_log.update_high_watermark(20)
    leader_log.maybe_increment_log_start_offset(10)
    write_leader_batch(follower_log, 0, 3, "e0")
    thread = LocalFetcherThread(leader_log, follower_log, leader_epoch=0, time=time, truncation_on_fetch=True)
    thread.add_partitions({TP: InitialFetchState(None, 0, 3)})
    run_until(thread, lambda: follower_log.log_end_offset == 20)
    assert follower_log.log_start_offset == 10
    assert batches_of(follower_log) == batches_of(leader_log)


def test_an_answer_for_an_offset_no_longer_wanted_is_not_appended(logs) -> None:
    time, make = logs
    leader_log, follower_log = make("leader"), make("follower")
    thread = LocalFetcherThread(leader_log, follower_log, leader_epoch=0, time=time, truncation_on_fetch=True)
    thread.add_partitions({TP: InitialFetchState(None, 0, 0)})
    run_until(thread, lambda: thread.fetch_state(TP).state is ReplicaState.FETCHING)
    write_leader_batch(leader_log, 0, 5, "e0")
    # an answer to a fetch from offset 3, while the partition waits for offset 0
    stale = thread.build_fetch({TP: PartitionFetchState.of(3, None, 0, ReplicaState.FETCHING, None)}).result
    thread._process_fetch_request(stale.partition_data, stale.fetch_request)
    assert follower_log.log_end_offset == 0
    run_until(thread, lambda: follower_log.log_end_offset == 5)
