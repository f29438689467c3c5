"""KafkaApis on its own: requests built as a client encodes them, handed to ``KafkaApis.handle``
as a handler thread would, over a real ReplicaManager, LogManager and MetadataCache on files
in tmp_path (the ``Broker`` stack of test_replica_manager.py). What KafkaApis sends back
goes through a real RequestChannel to a response collector standing in for the Processor,
and is decoded from the bytes the Processor would write.
"""
from __future__ import annotations

import queue

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.network.request_channel import (
    CloseConnectionResponse,
    NoOpResponse,
    Request,
    RequestChannel,
    RequestContext,
    SendResponse,
)
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_response, encode_request, request_schema
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.server.kafka_apis import KafkaApis
from tests.network.test_request_channel import send_bytes
from tests.server.test_replica_manager import Broker, batch

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
WAIT_S = 10.0


class ResponseCollector:
    """Processor 0 as the RequestChannel sees it: keeps every response sent to it."""

    id = 0

    def __init__(self) -> None:
        self.responses: queue.Queue = queue.Queue()

    def enqueue_response(self, response) -> None:
        self.responses.put(response)


class Apis:
    def __init__(self, tmp_path) -> None:
        self.broker = Broker(str(tmp_path / "logs"))
        self.channel = RequestChannel(10)
        self.collector = ResponseCollector()
        self.channel.add_processor(self.collector)
        self.apis = KafkaApis(self.channel, self.broker.rm, None, None, None, 0, self.broker.config,
                              self.broker.metadata_cache, "test-cluster-id")
        self._correlation_id = 0

    def request(self, api: ApiKeys, version: int, **values) -> Request:
        self._correlation_id += 1
        body = build_entity(request_schema(api, version), values)
        header = RequestHeader.for_request(api, version, self._correlation_id, "apis-test")
        frame = memoryview(bytearray(encode_request(header, body)[4:]))
        context = RequestContext(header, f"127.0.0.1:9092-127.0.0.1:5000-{self._correlation_id}", "127.0.0.1")
        return Request(0, context, 0, frame)

    def call(self, api: ApiKeys, version: int, **values):
        """Handle one request; the decoded response body (or the non-Send response)."""
        request = self.request(api, version, **values)
        self.apis.handle(request)
        response = self.collector.responses.get(timeout=WAIT_S)
        assert response.request is request
        if not isinstance(response, SendResponse):
            return response
        frame = send_bytes(response.response_send)[4:]
        header, body = decode_response(frame, api, version)
        assert header.correlation_id == request.correlation_id
        return body

    def produce(self, tp: TopicPartition, *values: bytes, acks: int = 1, version: int = 8):
        return self.call(ApiKeys.PRODUCE, version, transactional_id=None, acks=acks, timeout=5000,
                         topic_data=[{"name": tp.topic, "partition_data": [
                             {"index": tp.partition, "records": batch(*values)}]}])

    def close(self) -> None:
        self.broker.close()
        self.channel.shutdown()


@pytest.fixture
def env(tmp_path):
    e = Apis(tmp_path)
    yield e
    e.close()


def only_partition(response):
    [topic] = response.responses
    [partition] = topic.partition_responses
    return partition


def test_api_versions_lists_the_served_apis(env):
    body = env.call(ApiKeys.API_VERSIONS, 3, client_software_name="apis-test", client_software_version="1")
    assert Errors.for_code(body.error_code) is Errors.NONE
    served = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in body.api_keys}
    assert served[ApiKeys.PRODUCE.value][1] >= 8
    assert served[ApiKeys.FETCH.value][1] >= 11
    assert ApiKeys.METADATA.value in served


def test_metadata_shows_this_broker_leading_its_partitions(env):
    env.broker.lead(T0, T1)
    body = env.call(ApiKeys.METADATA, 9, topics=[{"name": "t"}], allow_auto_topic_creation=False,
                    include_cluster_authorized_operations=False, include_topic_authorized_operations=False)
    assert body.cluster_id == "test-cluster-id"
    [topic] = body.topics
    assert topic.name == "t" and Errors.for_code(topic.error_code) is Errors.NONE
    assert sorted((int(p.partition_index), int(p.leader_id)) for p in topic.partitions) == [(0, 0), (1, 0)]


def test_produce_appends_and_fetch_reads_it_back(env):
    env.broker.lead(T0)
    first = only_partition(env.produce(T0, b"a", b"b"))
    assert Errors.for_code(first.error_code) is Errors.NONE and first.base_offset == 0
    second = only_partition(env.produce(T0, b"c"))
    assert second.base_offset == 2
    assert env.broker.rm.get_log_end_offset(T0) == 3

    body = env.call(ApiKeys.FETCH, 11, replica_id=-1, max_wait=0, min_bytes=1, max_bytes=1 << 20,
                    isolation_level=0, session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                    topics=[{"topic": "t", "partitions": [{
                        "partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                        "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}])
    [topic] = body.responses
    [partition] = topic.partitions
    assert Errors.for_code(partition.error_code) is Errors.NONE
    assert partition.high_watermark == 3
    records = MemoryRecords(bytearray(bytes(partition.records)))
    assert [r.value for b in records.batches() for r in b.records()] == [b"a", b"b", b"c"]


def test_list_offsets_answers_the_log_end(env):
    env.broker.lead(T0)
    env.produce(T0, b"x", b"y")
    body = env.call(ApiKeys.LIST_OFFSETS, 5, replica_id=-1, isolation_level=0, topics=[{
        "name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}])
    [topic] = body.topics
    [partition] = topic.partitions
    assert Errors.for_code(partition.error_code) is Errors.NONE and partition.offset == 2


def test_produce_to_a_partition_not_hosted_here_is_refused(env):
    partition = only_partition(env.produce(TopicPartition("elsewhere", 0), b"x"))
    assert Errors.for_code(partition.error_code) in (Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                                    Errors.NOT_LEADER_OR_FOLLOWER)
    assert partition.base_offset == -1


def test_acks_zero_answers_nothing_or_closes_on_error(env):
    env.broker.lead(T0)
    # Appended, nothing to write back: the connection is only unmuted.
    assert isinstance(env.produce(T0, b"quiet", acks=0), NoOpResponse)
    assert env.broker.rm.get_log_end_offset(T0) == 1
    # A failed acks=0 produce cannot be answered: the connection is closed.
    assert isinstance(env.produce(TopicPartition("elsewhere", 0), b"x", acks=0), CloseConnectionResponse)


def test_a_request_for_a_missing_topic_is_answered_with_its_error(env):
    body = env.call(ApiKeys.METADATA, 9, topics=[{"name": "nope"}], allow_auto_topic_creation=False,
                    include_cluster_authorized_operations=False, include_topic_authorized_operations=False)
    [topic] = body.topics
    assert Errors.for_code(topic.error_code) is Errors.UNKNOWN_TOPIC_OR_PARTITION
    # The handler is still usable afterwards and marks every request locally complete.
    request = env.request(ApiKeys.API_VERSIONS, 3, client_software_name="a", client_software_version="1")
    env.apis.handle(request)
    assert isinstance(env.collector.responses.get(timeout=WAIT_S), SendResponse)
    assert request.api_local_complete_time_ns > 0


@pytest.mark.parametrize("version", [1, 2])
def test_elect_leaders_with_an_unknown_election_type_is_an_invalid_request(env, version):
    env.broker.lead(T0, T1)
    body = env.call(ApiKeys.ELECT_LEADERS, version, election_type=7, timeout=5000,
                    topic_partitions=[{"topic": "t", "partitions": [0, 1]}])
    assert Errors.for_code(body.error_code) is Errors.INVALID_REQUEST
    [topic] = body.replica_election_results
    assert topic.topic == "t"
    assert sorted((int(p.partition_id), Errors.for_code(p.error_code), p.error_message)
                  for p in topic.partition_result) == [
        (0, Errors.INVALID_REQUEST, "Unknown election type 7"), (1, Errors.INVALID_REQUEST, "Unknown election type 7")]
    # nothing moved: this broker still leads both partitions
    assert {p.leader for p in (env.broker.metadata_cache.get_partition_info(tp) for tp in (T0, T1))} == {0}
