"""ReplicaManager (server/replica_manager.py) over a real LogManager and real files in tmp_path.

Requests from the controller are built with the generated LeaderAndIsr / StopReplica /
UpdateMetadata classes; produce and fetch go through append_records / fetch_messages with
their callbacks, as KafkaApis calls them.
"""
from __future__ import annotations

import os
import threading
import time as _time
import uuid

import pytest

from kafka_py.clients.common.isolation_level import IsolationLevel
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_manager import LogManager
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import PartitionData
from kafka_py.clients.common.protocol.schema.leader_and_isr.v4 import request as lai4
from kafka_py.clients.common.protocol.schema.leader_and_isr.v5 import request as lai5
from kafka_py.clients.common.protocol.schema.stop_replica.v1 import request as sr1
from kafka_py.clients.common.protocol.schema.stop_replica.v3 import request as sr3
from kafka_py.clients.common.protocol.schema.update_metadata.v7 import request as um7
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.server.metadata_cache import MetadataCache
from kafka_py.server.replica_manager import (
    HIGH_WATERMARK_FILENAME,
    ControllerMovedException,
    ReplicaManager,
    StopReplicaPartitionState,
    stop_replica_partition_states,
)
from kafka_py.server.replica_manager_types import HostedPartition
from kafka_py.core.utils.kafka_scheduler import KafkaScheduler
from kafka_py.clients.common.utils.time import Time

NOW = int(_time.time() * 1000)
T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
WAIT = 10  # seconds an Event may take before a test gives up (never asserted as a duration)


def batch(*values: bytes, timestamp: int = NOW, **kwargs) -> bytes:
    return build_batch([SimpleRecord(None, v, timestamp=timestamp) for v in values], **kwargs)


def records(*values: bytes, **kwargs) -> MemoryRecords:
    return MemoryRecords(bytearray(batch(*values, **kwargs)))


def values_of(file_records) -> list[bytes]:
    assert isinstance(file_records, FileRecords)
    data = MemoryRecords(file_records.read_bytes(0, file_records.size_in_bytes()))
    return [r.value for b in data.batches() for r in b.records()]


def lai_request(partitions, controller_epoch: int = 1, version: int = 4, topic_id=None):
    """partitions: (topic, partition, leader, leader_epoch, replicas, isr)."""
    mod = lai4 if version == 4 else lai5
    by_topic: dict = {}
    for topic, p, leader, epoch, replicas, isr in partitions:
        by_topic.setdefault(topic, []).append(mod.LeaderAndIsrPartitionState(
            partition_index=p, controller_epoch=controller_epoch, leader=leader, leader_epoch=epoch, isr=tuple(isr),
            zk_version=0, replicas=tuple(replicas), is_new=True))
    if version == 4:
        topic_states = tuple(mod.LeaderAndIsrTopicState(topic_name=t, partition_states=tuple(s))
                             for t, s in by_topic.items())
    else:
        topic_states = tuple(mod.LeaderAndIsrTopicState(topic_name=t, topic_id=topic_id or uuid.uuid4(),
                                                        partition_states=tuple(s)) for t, s in by_topic.items())
    extra = {} if version == 4 else {"type": 0}
    return mod.LeaderAndIsrRequest(controller_id=0, controller_epoch=controller_epoch, broker_epoch=-1,
                                   topic_states=topic_states, live_leaders=(), **extra)


def um_request(topics: dict, broker_ids=(0, 1), controller_epoch: int = 1):
    brokers = tuple(um7.UpdateMetadataBroker(id=b, endpoints=(um7.UpdateMetadataEndpoint(
        port=9092 + b, host="localhost", listener="PLAINTEXT", security_protocol=0),), rack=None) for b in broker_ids)
    states = tuple(um7.UpdateMetadataTopicState(topic_name=t, topic_id=uuid.UUID(int=0), partition_states=tuple(
        um7.UpdateMetadataPartitionState(partition_index=p, controller_epoch=controller_epoch, leader=leader,
                                         leader_epoch=1, isr=tuple(replicas), zk_version=0,
                                         replicas=tuple(replicas)) for p, leader, replicas in parts))
        for t, parts in topics.items())
    return um7.UpdateMetadataRequest(controller_id=0, controller_epoch=controller_epoch, broker_epoch=-1,
                                     topic_states=states, live_brokers=brokers)


def partition_errors(response) -> dict:
    return {TopicPartition(e.topic_name, e.partition_index): Errors.for_code(e.error_code)
            for e in response.partition_errors}


class Broker:
    """One broker's storage stack: LogManager, MetadataCache, ReplicaManager on a log dir."""

    def __init__(self, log_dir: str, topic_overrides=None) -> None:
        self.config = KafkaConfig({"zookeeper.connect": "localhost:2181", "broker.id": "0", "log.dirs": log_dir},
                                  do_log=False)
        self.scheduler = KafkaScheduler(1, "test-scheduler-")
        self.scheduler.startup()
        defaults = self.config.log_config_defaults()
        self.log_manager = LogManager(self.config.log_dirs, LogConfig.from_props(defaults, {}),
                                      default_props=defaults, topic_config_overrides=topic_overrides or {},
                                      time=Time.SYSTEM)
        self.log_manager.startup()
        self.metadata_cache = MetadataCache(0)
        self.rm = ReplicaManager(self.config, Time.SYSTEM, None, self.scheduler, self.log_manager,
                                 self.metadata_cache)
        self.rm.startup()
        self._closed = False

    def close(self, checkpoint_hw: bool = True) -> None:
        if not self._closed:
            self._closed = True
            self.rm.shutdown(checkpoint_hw)
            self.log_manager.shutdown()
            self.scheduler.shutdown()

    # -- conveniences

    def lead(self, *tps: TopicPartition, epoch: int = 1, replicas=(0,), isr=None):
        topics: dict = {}
        for tp in tps:
            topics.setdefault(tp.topic, []).append((tp.partition, 0, replicas))
        self.metadata_cache.update_metadata(0, um_request(topics))
        response = self.rm.become_leader_or_follower(1, lai_request(
            [(tp.topic, tp.partition, 0, epoch, replicas, isr if isr is not None else replicas) for tp in tps]))
        assert set(partition_errors(response).values()) == {Errors.NONE}
        return response

    def produce(self, entries: dict, acks: int = 1, timeout_ms: int = 1000, origin=AppendOrigin.CLIENT) -> dict:
        result = {}
        done = threading.Event()

        def callback(responses) -> None:
            result.update(responses)
            done.set()

        self.rm.append_records(timeout_ms, acks, False, origin, entries, callback)
        assert done.wait(WAIT)
        return result

    def fetch(self, fetch_infos, timeout_ms: int = 0, min_bytes: int = 1, max_bytes: int = 50 * 1024 * 1024,
              replica_id: int = -1, isolation=IsolationLevel.READ_UNCOMMITTED, hard_max_bytes_limit: bool = False):
        result = []
        done = threading.Event()

        def callback(data) -> None:
            result.extend(data)
            done.set()

        self.rm.fetch_messages(timeout_ms, replica_id, min_bytes, max_bytes, hard_max_bytes_limit, fetch_infos, None,
                               callback, isolation, None)
        assert done.wait(WAIT)
        return dict(result)


@pytest.fixture
def broker(tmp_path):
    b = Broker(str(tmp_path / "logs"))
    yield b
    b.close()


# ---------------------------------------------------------------------------- LeaderAndIsr / StopReplica


def test_leader_and_isr_makes_leader_and_creates_logs(broker) -> None:
    response = broker.lead(T0, T1, epoch=3)
    assert Errors.for_code(response.error_code) is Errors.NONE
    assert partition_errors(response) == {T0: Errors.NONE, T1: Errors.NONE}
    for tp in (T0, T1):
        partition = broker.rm.online_partition(tp)
        assert partition.is_leader and partition.get_leader_epoch() == 3
        assert os.path.isdir(os.path.join(broker.config.log_dirs[0], str(tp)))
        assert broker.rm.get_partition_or_exception(tp) is partition
    assert broker.rm.leader_count == 2 and broker.rm.get_log_end_offset(T0) == 0

    # the same epoch again is a stale request for that partition; a newer one is applied
    again = broker.rm.become_leader_or_follower(2, lai_request([("t", 0, 0, 3, [0], [0]), ("t", 1, 0, 4, [0], [0])]))
    assert partition_errors(again) == {T0: Errors.STALE_CONTROLLER_EPOCH, T1: Errors.NONE}
    # a broker not among the replicas does not host the partition
    other = broker.rm.become_leader_or_follower(3, lai_request([("u", 0, 1, 1, [1], [1])]))
    assert partition_errors(other) == {TopicPartition("u", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION}
    # an older controller is refused as a whole
    broker.rm.become_leader_or_follower(4, lai_request([("v", 0, 0, 1, [0], [0])], controller_epoch=5))
    stale = broker.rm.become_leader_or_follower(5, lai_request([("t", 0, 0, 9, [0], [0])], controller_epoch=4))
    assert Errors.for_code(stale.error_code) is Errors.STALE_CONTROLLER_EPOCH
    assert broker.rm.online_partition(T0).get_leader_epoch() == 3


def test_leader_and_isr_v5_answers_by_topic_id(broker) -> None:
    topic_id = uuid.uuid4()
    response = broker.rm.become_leader_or_follower(1, lai_request([("t", 0, 0, 1, [0], [0])], version=5,
                                                                  topic_id=topic_id))
    [topic] = response.topics
    assert topic.topic_id == topic_id
    assert [(e.partition_index, Errors.for_code(e.error_code)) for e in topic.partition_errors] == [(0, Errors.NONE)]
    # as in Kafka 2.8, the id is taken by the next request once the log exists ...
    again = broker.rm.become_leader_or_follower(2, lai_request([("t", 0, 0, 2, [0], [0])], version=5,
                                                               topic_id=topic_id))
    assert Errors.for_code(again.topics[0].partition_errors[0].error_code) is Errors.NONE
    # ... and another id for the same topic is refused from then on
    clash = broker.rm.become_leader_or_follower(3, lai_request([("t", 0, 0, 3, [0], [0])], version=5,
                                                               topic_id=uuid.uuid4()))
    assert Errors.for_code(clash.topics[0].partition_errors[0].error_code) is Errors.INCONSISTENT_TOPIC_ID


def test_update_metadata_from_an_old_controller_is_refused(broker) -> None:
    assert broker.rm.maybe_update_metadata_cache(1, um_request({"t": [(0, 0, [0])]}, controller_epoch=3)) == []
    with pytest.raises(ControllerMovedException):
        broker.rm.maybe_update_metadata_cache(2, um_request({"u": [(0, 0, [0])]}, controller_epoch=2))
    assert not broker.metadata_cache.contains("u")


def test_stop_replica_with_delete_removes_the_log(broker) -> None:
    broker.lead(T0, T1, epoch=2)
    broker.produce({T0: records(b"a")})
    log_dir = os.path.join(broker.config.log_dirs[0], str(T0))
    assert os.path.isdir(log_dir)

    errors, error = broker.rm.stop_replicas(7, 0, 1, -1, {
        T0: StopReplicaPartitionState(0, leader_epoch=3, delete_partition=True),
        T1: StopReplicaPartitionState(1, leader_epoch=1, delete_partition=True)})
    assert error is Errors.NONE
    # T1's epoch is older than the one it is led in: fenced, kept
    assert errors == {T0: Errors.NONE, T1: Errors.FENCED_LEADER_EPOCH}
    assert not os.path.exists(log_dir)
    assert broker.log_manager.get_log(T0) is None
    assert broker.rm.get_partition(T0) is HostedPartition.NONE
    assert isinstance(broker.rm.get_partition(T1), HostedPartition.Online)
    # the topic is still known to the cluster, so clients are told to look elsewhere
    assert broker.produce({T0: records(b"b")})[T0].error is Errors.NOT_LEADER_OR_FOLLOWER

    stale, error = broker.rm.stop_replicas(8, 0, 0, -1, {T1: StopReplicaPartitionState(1, -2, True)})
    assert error is Errors.STALE_CONTROLLER_EPOCH and stale == {}


def test_stop_replica_in_the_current_leader_epoch_is_accepted(broker) -> None:
    """A cancelled reassignment stops its adding replicas without bumping the epoch they were
    told of (KAFKA-13972): the request in the current epoch must still remove them."""
    broker.lead(T0, epoch=4)
    errors, error = broker.rm.stop_replicas(8, 0, 1, -1, {
        T0: StopReplicaPartitionState(0, leader_epoch=4, delete_partition=True)})
    assert (error, errors) == (Errors.NONE, {T0: Errors.NONE})
    assert broker.rm.get_partition(T0) is HostedPartition.NONE
    assert not os.path.exists(os.path.join(broker.config.log_dirs[0], str(T0)))


def test_stop_replica_request_views() -> None:
    v1 = sr1.StopReplicaRequest(controller_id=0, controller_epoch=1, broker_epoch=-1, delete_partitions=True,
                                topics=(sr1.StopReplicaTopicV1(name="t", partition_indexes=(0, 2)),))
    assert stop_replica_partition_states(v1) == {T0: StopReplicaPartitionState(0, -1, True),
                                                 TopicPartition("t", 2): StopReplicaPartitionState(2, -1, True)}
    v3 = sr3.StopReplicaRequest(controller_id=0, controller_epoch=1, broker_epoch=-1, topic_states=(
        sr3.StopReplicaTopicState(topic_name="t", partition_states=(
            sr3.StopReplicaPartitionState(partition_index=1, leader_epoch=4, delete_partition=False),)),))
    assert stop_replica_partition_states(v3) == {T1: StopReplicaPartitionState(1, 4, False)}


# ---------------------------------------------------------------------------- produce


def test_append_with_acks_0_1_and_all(broker) -> None:
    broker.lead(T0)
    r1 = broker.produce({T0: records(b"a", b"b")}, acks=1)
    assert r1[T0].error is Errors.NONE and r1[T0].base_offset == 0
    r0 = broker.produce({T0: records(b"c")}, acks=0)
    assert r0[T0].base_offset == 2

    # acks=all with an ISR of one completes before append_records returns
    answered = []
    broker.rm.append_records(5000, -1, False, AppendOrigin.CLIENT, {T0: records(b"d", b"e")}, answered.append)
    assert len(answered) == 1 and answered[0][T0].error is Errors.NONE and answered[0][T0].base_offset == 3
    assert broker.rm.get_log_end_offset(T0) == 5
    assert broker.rm.delayed_produce_purgatory.num_delayed() == 0

    bad = broker.produce({T0: records(b"x")}, acks=2)
    assert bad[T0].error is Errors.INVALID_REQUIRED_ACKS
    assert broker.rm.get_log_end_offset(T0) == 5

    # internal topics only through the coordinators
    internal = broker.produce({TopicPartition("__consumer_offsets", 0): records(b"x")})
    assert internal[TopicPartition("__consumer_offsets", 0)].error is Errors.INVALID_TOPIC_EXCEPTION


def test_append_errors_per_partition(broker) -> None:
    broker.lead(T0)
    # a follower partition of a topic the cluster knows
    broker.metadata_cache.update_metadata(1, um_request({"f": [(0, 1, [1, 0])]}))
    broker.rm.become_leader_or_follower(2, lai_request([("f", 0, 1, 1, [1, 0], [1, 0])]))
    follower = TopicPartition("f", 0)
    assert not broker.rm.online_partition(follower).is_leader

    corrupt = bytearray(batch(b"payload"))
    corrupt[-3] ^= 0xFF  # inside the CRC-covered record bytes
    result = broker.produce({T0: MemoryRecords(corrupt), follower: records(b"x"),
                             TopicPartition("nope", 0): records(b"y"), T1: records(b"z")})
    assert result[T0].error is Errors.CORRUPT_MESSAGE and result[T0].base_offset == -1
    assert result[follower].error is Errors.NOT_LEADER_OR_FOLLOWER
    assert result[TopicPartition("nope", 0)].error is Errors.UNKNOWN_TOPIC_OR_PARTITION
    # t-1 is not in the metadata (lead() put t-0 there only), so it is unknown too
    assert result[T1].error is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert broker.rm.get_log_end_offset(T0) == 0
    assert broker.log_manager.get_log(T0).size == 0

    # acks=all where every partition failed does not wait
    failed = broker.produce({T0: MemoryRecords(bytearray(corrupt))}, acks=-1)
    assert failed[T0].error is Errors.CORRUPT_MESSAGE


def test_idempotent_duplicate_returns_original_offsets(broker) -> None:
    broker.lead(T0)
    broker.produce({T0: records(b"first")})
    original = batch(b"a", b"b", b"c", producer_id=1000, producer_epoch=0, base_sequence=0)
    first = broker.produce({T0: MemoryRecords(bytearray(original))})
    assert first[T0].error is Errors.NONE and first[T0].base_offset == 1
    retry = broker.produce({T0: MemoryRecords(bytearray(original))})
    assert retry[T0].error is Errors.NONE and retry[T0].base_offset == 1
    assert broker.rm.get_log_end_offset(T0) == 4
    # a gap in the sequence is refused
    gap = broker.produce({T0: records(b"d", producer_id=1000, producer_epoch=0, base_sequence=7)})
    assert gap[T0].error is Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_min_insync_replicas_refuses_acks_all(tmp_path) -> None:
    b = Broker(str(tmp_path / "logs"), topic_overrides={"strict": {"min.insync.replicas": 2}})
    try:
        tp = TopicPartition("strict", 0)
        b.lead(tp, replicas=(0, 1), isr=(0,))
        assert b.produce({tp: records(b"x")}, acks=-1)[tp].error is Errors.NOT_ENOUGH_REPLICAS
        assert b.rm.get_log_end_offset(tp) == 0
        assert b.produce({tp: records(b"x")}, acks=1)[tp].error is Errors.NONE
    finally:
        b.close()


def test_acks_all_waits_for_the_follower(broker) -> None:
    broker.lead(T0, replicas=(0, 1), isr=(0, 1))
    # the follower never fetches: the produce times out (records written, not replicated)
    timed_out = broker.produce({T0: records(b"a")}, acks=-1, timeout_ms=100)
    assert timed_out[T0].error is Errors.REQUEST_TIMED_OUT and timed_out[T0].base_offset == 0

    done = threading.Event()
    answer = {}

    def callback(responses) -> None:
        answer.update(responses)
        done.set()

    broker.rm.append_records(30000, -1, False, AppendOrigin.CLIENT, {T0: records(b"b", b"c")}, callback)
    assert not done.is_set() and broker.rm.delayed_produce_purgatory.num_delayed() == 1
    # follower 1 fetches up to the log end: the HW moves and the produce completes
    fetched = broker.fetch([(T0, PartitionData(3, 0, 1024 * 1024))], replica_id=1)
    assert fetched[T0].error is Errors.NONE
    assert done.wait(WAIT)
    assert answer[T0].error is Errors.NONE and answer[T0].base_offset == 1
    assert broker.log_manager.get_log(T0).high_watermark == 3


# ---------------------------------------------------------------------------- fetch


def test_fetch_returns_file_slices(broker) -> None:
    broker.lead(T0, T1)
    broker.produce({T0: records(b"a", b"b"), T1: records(b"x")})
    broker.produce({T0: records(b"c")})
    data = broker.fetch([(T0, PartitionData(0, 0, 1024 * 1024)), (T1, PartitionData(0, 0, 1024 * 1024))])
    assert data[T0].error is Errors.NONE and data[T0].high_watermark == 3 and data[T0].last_stable_offset == 3
    assert data[T0].log_start_offset == 0 and data[T0].preferred_read_replica is None
    assert values_of(data[T0].records) == [b"a", b"b", b"c"]
    assert values_of(data[T1].records) == [b"x"]
    # from the middle: the batch holding offset 1 comes whole
    assert values_of(broker.fetch([(T0, PartitionData(2, 0, 1024 * 1024))])[T0].records) == [b"c"]
    # at the end: nothing, no error
    at_end = broker.fetch([(T0, PartitionData(3, 0, 1024 * 1024))])[T0]
    assert at_end.error is Errors.NONE and len(at_end.records) == 0


def test_fetch_max_bytes_still_returns_one_batch(broker) -> None:
    broker.lead(T0, T1)
    broker.produce({T0: records(b"x" * 500), T1: records(b"y" * 500)})
    data = broker.fetch([(T0, PartitionData(0, 0, 100)), (T1, PartitionData(0, 0, 100))], max_bytes=100)
    # the first partition returns its whole first batch despite both limits; the second gets nothing
    assert values_of(data[T0].records) == [b"x" * 500]
    assert len(data[T1].records) == 0 and data[T1].error is Errors.NONE
    # Fetch v0-2 semantics: a partial batch instead
    hard = broker.fetch([(T0, PartitionData(0, 0, 100))], max_bytes=100, hard_max_bytes_limit=True)
    assert len(hard[T0].records) == 100


def test_fetch_errors(broker) -> None:
    broker.lead(T0, epoch=4)
    broker.produce({T0: records(b"a")})
    data = broker.fetch([(T0, PartitionData(5, 0, 1024)), (T1, PartitionData(0, 0, 1024)),
                         (TopicPartition("t", 9), PartitionData(0, 0, 1024))], timeout_ms=5000, min_bytes=1000)
    # an error answers at once even though min bytes were not reached
    assert data[T0].error is Errors.OFFSET_OUT_OF_RANGE and data[T0].high_watermark == -1
    assert data[T0].last_stable_offset is None and len(data[T0].records) == 0
    assert data[T1].error is Errors.UNKNOWN_TOPIC_OR_PARTITION
    fenced = broker.fetch([(T0, PartitionData(0, 0, 1024, current_leader_epoch=3))])
    assert fenced[T0].error is Errors.FENCED_LEADER_EPOCH
    unknown = broker.fetch([(T0, PartitionData(0, 0, 1024, current_leader_epoch=5))])
    assert unknown[T0].error is Errors.UNKNOWN_LEADER_EPOCH
    ok = broker.fetch([(T0, PartitionData(0, 0, 1024, current_leader_epoch=4))])
    assert values_of(ok[T0].records) == [b"a"]


def test_long_poll_fetch_completes_on_append(broker) -> None:
    broker.lead(T0)
    broker.produce({T0: records(b"old")})
    done = threading.Event()
    result = []

    def callback(data) -> None:
        result.extend(data)
        done.set()

    broker.rm.fetch_messages(5000, -1, 1, 1024 * 1024, False, [(T0, PartitionData(1, 0, 1024 * 1024))], None,
                             callback, IsolationLevel.READ_UNCOMMITTED, None)
    assert not done.is_set()
    assert broker.rm.delayed_fetch_purgatory.num_delayed() == 1

    appender = threading.Thread(target=lambda: broker.produce({T0: records(b"new")}))
    appender.start()
    assert done.wait(WAIT)
    appender.join()
    [(tp, data)] = result
    assert tp == T0 and data.error is Errors.NONE and data.high_watermark == 2
    assert values_of(data.records) == [b"new"]


def test_long_poll_fetch_times_out_empty(broker) -> None:
    broker.lead(T0)
    data = broker.fetch([(T0, PartitionData(0, 0, 1024))], timeout_ms=50, min_bytes=1)
    assert data[T0].error is Errors.NONE and len(data[T0].records) == 0 and data[T0].high_watermark == 0


def test_long_poll_fetch_completes_when_leadership_moves(broker) -> None:
    broker.lead(T0)
    done = threading.Event()
    result = []
    broker.rm.fetch_messages(30000, -1, 1, 1024, False, [(T0, PartitionData(0, 0, 1024))], None,
                             lambda data: (result.extend(data), done.set()), IsolationLevel.READ_UNCOMMITTED, None)
    assert not done.is_set()
    broker.metadata_cache.update_metadata(2, um_request({"t": [(0, 1, [1, 0])]}))
    broker.rm.become_leader_or_follower(3, lai_request([("t", 0, 1, 2, [1, 0], [1, 0])]))
    assert done.wait(WAIT)
    assert dict(result)[T0].error is Errors.NOT_LEADER_OR_FOLLOWER


def test_read_committed_stops_at_open_transaction(broker) -> None:
    broker.lead(T0)
    broker.produce({T0: records(b"plain")})
    txn = broker.produce({T0: records(b"t1", b"t2", producer_id=77, producer_epoch=0, base_sequence=0,
                                      is_transactional=True)})
    assert txn[T0].error is Errors.NONE and txn[T0].base_offset == 1
    committed = broker.fetch([(T0, PartitionData(0, 0, 1024 * 1024))], isolation=IsolationLevel.READ_COMMITTED)
    assert committed[T0].last_stable_offset == 1 and committed[T0].high_watermark == 3
    assert values_of(committed[T0].records) == [b"plain"]
    assert committed[T0].aborted_transactions == []
    uncommitted = broker.fetch([(T0, PartitionData(0, 0, 1024 * 1024))])
    assert values_of(uncommitted[T0].records) == [b"plain", b"t1", b"t2"]
    rc = broker.rm.fetch_offset_for_timestamp(T0, -1, IsolationLevel.READ_COMMITTED, None, True)
    ru = broker.rm.fetch_offset_for_timestamp(T0, -1, IsolationLevel.READ_UNCOMMITTED, None, True)
    assert (rc.offset, ru.offset) == (1, 3)


# ---------------------------------------------------------------------------- list offsets, delete records


def test_list_offsets(broker) -> None:
    broker.lead(T0, epoch=2)
    broker.produce({T0: records(b"a", b"b", timestamp=1000)})
    broker.produce({T0: records(b"c", timestamp=3000)})
    rm = broker.rm
    assert rm.fetch_offset_for_timestamp(T0, -2, IsolationLevel.READ_UNCOMMITTED, None, True).offset == 0
    latest = rm.fetch_offset_for_timestamp(T0, -1, IsolationLevel.READ_UNCOMMITTED, 2, True)
    assert (latest.offset, latest.leader_epoch) == (3, 2)
    assert rm.fetch_offset_for_timestamp(T0, 2000, IsolationLevel.READ_UNCOMMITTED, None, True).offset == 2
    assert rm.fetch_offset_for_timestamp(T0, 9000, IsolationLevel.READ_UNCOMMITTED, None, True) is None
    with pytest.raises(type(Errors.UNKNOWN_TOPIC_OR_PARTITION.exception())):
        rm.fetch_offset_for_timestamp(TopicPartition("zz", 0), -1, IsolationLevel.READ_UNCOMMITTED, None, True)
    with pytest.raises(type(Errors.FENCED_LEADER_EPOCH.exception())):
        rm.fetch_offset_for_timestamp(T0, -1, IsolationLevel.READ_UNCOMMITTED, 1, True)


def test_delete_records_moves_log_start_offset(broker) -> None:
    broker.lead(T0)
    for i in range(5):
        broker.produce({T0: records(b"v%d" % i)})
    done = threading.Event()
    answer = {}
    broker.rm.delete_records(1000, {T0: 3, TopicPartition("zz", 0): 1, TopicPartition("__consumer_offsets", 0): 0},
                             lambda r: (answer.update(r), done.set()))
    assert done.wait(WAIT)
    assert answer[T0].error is Errors.NONE and answer[T0].low_watermark == 3
    assert answer[TopicPartition("zz", 0)].error is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert answer[TopicPartition("__consumer_offsets", 0)].error is Errors.INVALID_TOPIC_EXCEPTION
    assert broker.log_manager.get_log(T0).log_start_offset == 3
    below = broker.fetch([(T0, PartitionData(1, 0, 1024))])
    assert below[T0].error is Errors.OFFSET_OUT_OF_RANGE
    data = broker.fetch([(T0, PartitionData(3, 0, 1024 * 1024))])
    assert data[T0].log_start_offset == 3 and values_of(data[T0].records) == [b"v3", b"v4"]
    assert broker.rm.fetch_offset_for_timestamp(T0, -2, IsolationLevel.READ_UNCOMMITTED, None, True).offset == 3

    answer.clear()
    done.clear()
    broker.rm.delete_records(1000, {T0: 99}, lambda r: (answer.update(r), done.set()))
    assert done.wait(WAIT) and answer[T0].error is Errors.OFFSET_OUT_OF_RANGE


# ---------------------------------------------------------------------------- high watermark checkpoint


def test_high_watermark_checkpoint_written_and_reloaded(tmp_path) -> None:
    log_dir = str(tmp_path / "logs")
    first = Broker(log_dir)
    try:
        first.lead(T0, T1)
        first.produce({T0: records(b"a", b"b", b"c"), T1: records(b"x")})
        first.rm.checkpoint_high_watermarks()
        with open(os.path.join(log_dir, HIGH_WATERMARK_FILENAME)) as f:
            lines = f.read().splitlines()
        # Kafka's format: version, entry count, "topic partition offset" lines
        assert lines[:2] == ["0", "2"] and sorted(lines[2:]) == ["t 0 3", "t 1 1"]
        first.produce({T0: records(b"d")})
    finally:
        first.close()  # shutdown checkpoints again: t-0 is at 4 now

    second = Broker(log_dir)
    try:
        # as a follower nothing moves the HW, so what it has came from the checkpoint
        second.metadata_cache.update_metadata(0, um_request({"t": [(0, 1, [1, 0]), (1, 1, [1, 0])]}))
        response = second.rm.become_leader_or_follower(1, lai_request([("t", 0, 1, 2, [1, 0], [1, 0]),
                                                                      ("t", 1, 1, 2, [1, 0], [1, 0])]))
        assert set(partition_errors(response).values()) == {Errors.NONE}
        assert second.log_manager.get_log(T0).high_watermark == 4
        assert second.log_manager.get_log(T1).high_watermark == 1
        assert not second.rm.online_partition(T0).is_leader
    finally:
        second.close()


def test_requests_for_partitions_not_hosted_make_no_topic_meters(broker) -> None:
    """A client with stale metadata after a reassignment or a deletion: counted for all
    topics, but the topic's meters, removed when it left, are not made again."""
    stats = broker.rm.broker_topic_stats
    broker.lead(T0)
    broker.produce({T0: records(b"a")})
    broker.fetch([(T0, PartitionData(0, 0, 1024))])
    broker.rm.stop_replicas(1, 0, 1, -1, {T0: StopReplicaPartitionState(0, -1, True)})
    assert "t" not in stats._stats
    produced = stats.all_topics_stats.total_produce_request_rate.count
    fetched = stats.all_topics_stats.total_fetch_request_rate.count
    gone = TopicPartition("never-here", 0)

    answers = broker.produce({T0: records(b"b"), gone: records(b"c")})
    assert {tp: a.error for tp, a in answers.items()} == {T0: Errors.NOT_LEADER_OR_FOLLOWER,
                                                          gone: Errors.UNKNOWN_TOPIC_OR_PARTITION}
    answers = broker.fetch([(T0, PartitionData(0, 0, 1024)), (gone, PartitionData(0, 0, 1024))])
    assert {tp: a.error for tp, a in answers.items()} == {T0: Errors.NOT_LEADER_OR_FOLLOWER,
                                                          gone: Errors.UNKNOWN_TOPIC_OR_PARTITION}
    assert set(stats._stats) == set()
    assert stats.all_topics_stats.total_produce_request_rate.count == produced + 2
    assert stats.all_topics_stats.total_fetch_request_rate.count == fetched + 2


def test_the_last_partition_to_leave_a_log_dir_leaves_its_high_watermark_checkpoint(broker) -> None:
    def checkpointed() -> list[str]:
        broker.rm.checkpoint_high_watermarks()
        with open(os.path.join(broker.config.log_dirs[0], HIGH_WATERMARK_FILENAME)) as f:
            return f.read().splitlines()[2:]

    broker.lead(T0, T1)
    broker.produce({T0: records(b"a"), T1: records(b"x", b"y")})
    assert sorted(checkpointed()) == ["t 0 1", "t 1 2"]
    broker.rm.stop_replicas(1, 0, 1, -1, {T0: StopReplicaPartitionState(0, -1, True)})
    assert checkpointed() == ["t 1 2"]
    # the dir has no partition left: its file is written once more, empty (Kafka leaves it as it was)
    broker.rm.stop_replicas(2, 0, 1, -1, {T1: StopReplicaPartitionState(1, -1, True)})
    assert checkpointed() == []
    assert checkpointed() == []


def test_delayed_operations_are_answered_on_shutdown_paths(broker) -> None:
    """StopReplica with delete answers a waiting fetch at once (the partition is gone from here)."""
    broker.lead(T0)
    done = threading.Event()
    result = []
    broker.rm.fetch_messages(30000, -1, 1, 1024, False, [(T0, PartitionData(0, 0, 1024))], None,
                             lambda data: (result.extend(data), done.set()), IsolationLevel.READ_UNCOMMITTED, None)
    broker.rm.stop_replicas(1, 0, 1, -1, {T0: StopReplicaPartitionState(0, -1, True)})
    assert done.wait(WAIT)
    # the topic is still in the metadata: the consumer is sent to look for the new leader
    assert dict(result)[T0].error is Errors.NOT_LEADER_OR_FOLLOWER


def test_wake_up_deferred_while_the_caller_holds_a_lock(broker) -> None:
    """With a delayed_produce_lock (the group coordinator's case) waiting fetches are woken only
    by try_complete_actions, once the caller has let go of its lock."""
    broker.lead(T0)
    done = threading.Event()
    broker.rm.fetch_messages(30000, -1, 1, 1024, False, [(T0, PartitionData(0, 0, 1024))], None,
                             lambda data: done.set(), IsolationLevel.READ_UNCOMMITTED, None)
    group_lock = threading.RLock()
    answered = []
    with group_lock:
        broker.rm.append_records(5000, -1, True, AppendOrigin.COORDINATOR, {T0: records(b"g")}, answered.append,
                                 delayed_produce_lock=group_lock)
    assert answered and answered[0][T0].error is Errors.NONE
    assert not done.is_set()
    broker.rm.try_complete_actions()
    assert done.wait(WAIT)


def test_concurrent_producers_and_long_polls(broker) -> None:
    broker.lead(T0, T1)
    per_thread = 40
    offsets: list = []
    lock = threading.Lock()
    errors: list = []

    def producer(n: int) -> None:
        for i in range(per_thread):
            tp = T0 if i % 2 else T1
            r = broker.produce({tp: records(b"%d-%d" % (n, i))}, acks=-1)
            with lock:
                if r[tp].error is not Errors.NONE:
                    errors.append(r[tp].error)
                offsets.append((tp, r[tp].base_offset))

    def consumer() -> None:
        position = 0
        while position < 2 * per_thread:
            data = broker.fetch([(T0, PartitionData(position, 0, 1024 * 1024))], timeout_ms=2000, min_bytes=1)
            if data[T0].error is not Errors.NONE:
                errors.append(data[T0].error)
                return
            position += len(values_of(data[T0].records)) if len(data[T0].records) else 0

    threads = [threading.Thread(target=producer, args=(n,)) for n in range(4)] + [threading.Thread(target=consumer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads) and errors == []
    for tp in (T0, T1):
        got = sorted(o for p, o in offsets if p == tp)
        assert got == list(range(2 * per_thread))
        assert broker.log_manager.get_log(tp).high_watermark == 2 * per_thread
