"""RaftConfig parsing, RequestManager, BatchAccumulator/BatchBuilder, ThresholdPurgatory and
the batch readers (Kafka's RequestManagerTest, BatchAccumulatorTest, BatchBuilderTest,
ThresholdPurgatoryTest, RecordsBatchReaderTest)."""
import random

import pytest

from kafka_py.clients.common.errors import RecordBatchTooLargeException
from kafka_py.raft.internals.batch_accumulator import BatchAccumulator
from kafka_py.raft.internals.records_batch_reader import RecordsBatchReader
from kafka_py.raft.internals.string_serde import StringSerde
from kafka_py.raft.internals.threshold_purgatory import ThresholdPurgatory
from kafka_py.raft.raft_config import (
    DEFAULT_QUORUM_ELECTION_TIMEOUT_MS,
    InetAddressSpec,
    RaftConfig,
    UnknownAddressSpec,
)
from kafka_py.raft.request_manager import RequestManager
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.config.config_def import ConfigException
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.clients.common.utils.time import MockTime
from tests.raft.mocks import MockExpirationService


# ---- RaftConfig -------------------------------------------------------------------------------

def test_config_defaults_and_voters():
    config = RaftConfig.from_props({"controller.quorum.voters": "1@localhost:9092,2@[::1]:9093,3@0.0.0.0:0"})
    assert config.election_timeout_ms == DEFAULT_QUORUM_ELECTION_TIMEOUT_MS == 1000
    assert (config.fetch_timeout_ms, config.election_backoff_max_ms, config.request_timeout_ms,
            config.retry_backoff_ms, config.append_linger_ms) == (2000, 1000, 2000, 20, 25)
    assert config.voter_connections[1] == InetAddressSpec("localhost", 9092)
    assert config.voter_connections[2] == InetAddressSpec("::1", 9093)
    assert isinstance(config.voter_connections[3], UnknownAddressSpec)
    assert config.quorum_voter_ids() == {1, 2, 3}
    assert RaftConfig.from_props({}).quorum_voter_ids() == frozenset()


@pytest.mark.parametrize("key,value,fragment", [
    ("controller.quorum.voters", "1localhost:9092", "{id}@{host}:{port}"),
    ("controller.quorum.voters", "x@localhost:9092", "voter ID as an integer"),
    ("controller.quorum.voters", "1@localhost", "host name"),
    ("controller.quorum.voters", "1@h:1,1@h:2", "more than once"),
    ("controller.quorum.voters", "1@h:70000", "out of range"),
    ("controller.quorum.election.timeout.ms", "-1", "at least 0"),
    ("controller.quorum.fetch.timeout.ms", "soon", "INT"),
    ("controller.quorum.append.linger.ms", "1.5", "INT"),
    ("controller.quorum.retry.backoff.ms", "-20", "at least 0"),
])
def test_config_errors_name_the_key(key, value, fragment):
    with pytest.raises(ConfigException) as e:
        RaftConfig.from_props({key: value})
    assert key in str(e.value) and fragment in str(e.value)
    assert e.value.name == key


# ---- RequestManager ---------------------------------------------------------------------------

def test_connection_lifecycle():
    manager = RequestManager({1, 2, 3}, retry_backoff_ms=50, request_timeout_ms=1000, random=random.Random(1))
    conn = manager.get_or_create(1)
    assert conn.is_ready(0)
    conn.on_request_sent(7, 100)
    assert not conn.is_ready(200) and conn.has_inflight_request(200)
    assert conn.remaining_request_time_ms(200) == 900
    assert conn.is_response_expected(7) and not conn.is_response_expected(8)
    conn.on_response_error(8, 300)  # stale correlation id: ignored
    assert conn.has_inflight_request(300)
    conn.on_response_error(7, 300)
    assert conn.is_backing_off(320) and conn.remaining_backoff_ms(320) == 30
    assert conn.is_ready(350)
    conn.on_request_sent(9, 400)
    assert conn.is_ready(1400)  # the request timed out


def test_find_ready_voter_waits_for_inflight_fetch():
    manager = RequestManager({1, 2, 3}, 50, 1000, random.Random(3))
    voter = manager.find_ready_voter(0)
    assert voter in {1, 2, 3}
    manager.get_or_create(voter).on_request_sent(1, 0)
    assert manager.find_ready_voter(10) is None
    assert manager.backoff_before_available_voter(10) == 0  # others are ready
    manager.reset_all()
    assert manager.get_or_create(voter).is_ready(10)


def test_backoff_before_available_voter():
    manager = RequestManager({1, 2}, 50, 1000, random.Random(3))
    manager.get_or_create(1).on_request_sent(1, 0)
    manager.get_or_create(2).on_request_sent(2, 0)
    manager.get_or_create(2).on_response_error(2, 10)
    assert manager.backoff_before_available_voter(20) == 40


# ---- BatchAccumulator / BatchBuilder -----------------------------------------------------------

def accumulator(time, linger_ms=10, max_batch_size=256):
    return BatchAccumulator(3, 100, linger_ms, max_batch_size, time, CompressionType.NONE, StringSerde())


def test_append_offsets_and_linger():
    time = MockTime(0, 0)
    acc = accumulator(time)
    assert acc.is_empty()
    assert acc.append(3, ["a", "b", "c"]) == 102
    assert not acc.is_empty()
    assert acc.time_until_drain(time.milliseconds()) == 10
    assert acc.append(4, ["x"]) == LONG_MAX  # wrong epoch: can never commit
    time.sleep(10)
    assert acc.needs_drain(time.milliseconds())
    batches = acc.drain()
    assert [b.base_offset for b in batches] == [100]
    assert batches[0].records == ["a", "b", "c"]
    assert acc.is_empty() and acc.time_until_drain(time.milliseconds()) == LONG_MAX - time.milliseconds()


def test_batches_are_real_v2_batches():
    time = MockTime(5_000, 0)
    acc = accumulator(time, linger_ms=0)
    acc.append(3, ["hello", "world"])
    (batch,) = acc.drain()
    (record_batch,) = list(batch.data.batches())
    record_batch.ensure_valid()  # CRC-32C and layout
    assert record_batch.base_offset == 100 and record_batch.last_offset == 101
    assert record_batch.partition_leader_epoch == 3
    assert record_batch.base_timestamp == 5_000 and not record_batch.is_control_batch
    assert [r.value for r in record_batch.records()] == [b"hello", b"world"]
    assert all(r.key is None for r in record_batch.records())


def test_splits_into_batches_and_atomic_stays_whole():
    time = MockTime(0, 0)
    acc = accumulator(time, linger_ms=0, max_batch_size=128)
    records = ["r" * 20 for _ in range(10)]
    acc.append(3, records)
    batches = acc.drain()
    assert len(batches) > 1
    assert sum(len(b.records) for b in batches) == 10
    assert [b.base_offset for b in batches] == sorted(b.base_offset for b in batches)
    for b in batches:
        assert b.size_in_bytes() <= 128
    acc.append_atomic(3, ["s" * 15, "t" * 15])
    (atomic,) = acc.drain()
    assert atomic.records == ["s" * 15, "t" * 15]


def test_record_larger_than_batch_is_refused():
    acc = accumulator(MockTime(0, 0), max_batch_size=100)
    with pytest.raises(RecordBatchTooLargeException):
        acc.append(3, ["z" * 200])
    with pytest.raises(RecordBatchTooLargeException):
        acc.append_atomic(3, ["z" * 30, "z" * 30, "z" * 30])


def test_drain_waits_while_appender_holds_the_lock():
    time = MockTime(0, 0)
    acc = accumulator(time, linger_ms=0)
    acc.append(3, ["a"])
    acc._append_lock.acquire()
    try:
        assert acc.drain() == []  # the raft thread does not block
    finally:
        acc._append_lock.release()
    assert acc.time_until_drain(0) == 0 or acc.needs_drain(0)
    acc.append(3, ["b"])  # the appender finishes the drain first
    drained = acc.drain()
    assert [b.records for b in drained] == [["a"]]


def test_records_batch_reader_skips_control_batches():
    from kafka_py.raft.control_record_utils import LeaderChangeMessage, with_leader_change_message
    acc = accumulator(MockTime(0, 0), linger_ms=0)
    data = bytearray(bytes(with_leader_change_message(99, 0, 3, LeaderChangeMessage(1, (1,), (1,))).buffer))
    acc.append(3, ["p", "q"])
    data += bytes(acc.drain()[0].data.buffer)
    closed = []

    class Listener:
        def on_close(self, reader):
            closed.append(reader.last_offset())

    reader = RecordsBatchReader(99, MemoryRecords(data), StringSerde(), Listener())
    batches = list(reader)
    assert [(b.base_offset, b.epoch, list(b.records)) for b in batches] == [(100, 3, ["p", "q"])]
    assert reader.last_offset() is None
    reader.close()
    assert closed == [101]


# ---- ThresholdPurgatory ------------------------------------------------------------------------

def test_purgatory_completes_at_threshold_and_expires():
    time = MockTime(0, 0)
    purgatory = ThresholdPurgatory(MockExpirationService(time))
    f10 = purgatory.await_(10, 500)
    f20 = purgatory.await_(20, 500)
    f30 = purgatory.await_(30, 100)
    assert purgatory.num_waiting() == 3
    purgatory.maybe_complete(10, 5)
    assert f10.get(0) == 5 and not f20.is_done()
    time.sleep(100)
    assert f30.is_completed_exceptionally()
    assert purgatory.num_waiting() == 1
    purgatory.complete_all_exceptionally(RuntimeError("gone"))
    assert f20.is_completed_exceptionally() and purgatory.num_waiting() == 0
