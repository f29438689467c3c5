"""The oldest versions of the client APIs against a real broker, on raw sockets: ApiVersions
advertising 2.8.2's full ranges, ListOffsets v0 as Sarama (and so Burrow) sends it,
OffsetCommit v0 (ZooKeeper-stored offsets) and v1, OffsetFetch v0, CreateTopics v0-v1,
DeleteTopics v0 and DescribeConfigs v0."""
from __future__ import annotations

import struct

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kazoo.client import KazooClient

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from tests.integration.broker_harness import RawClient, wait_until

TOPIC = "old-versions"
RECORDS = 40

# 2.8.2's ApiVersions answer for these (ApiKeys' ranges of Kafka 2.8.2)
KAFKA_2_8_2_RANGES = {0: (0, 9), 1: (0, 12), 2: (0, 6), 8: (0, 8), 9: (0, 7), 19: (0, 7), 20: (0, 6), 32: (0, 4)}


def req(api: ApiKeys, version: int, **values):
    cls = request_schema(api, version)
    unknown = set(values) - set(cls.__dataclass_fields__)
    assert not unknown, f"{cls.__name__} v{version} has no fields {unknown}"
    return build_entity(cls, values)


@pytest.fixture(scope="module", autouse=True)
def produced(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(TOPIC, 2, 1)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    try:
        for i in range(RECORDS):
            producer.send(TOPIC, partition=0, key=b"k%d" % i, value=b"v%d" % i)
        producer.flush()
    finally:
        producer.close()


@pytest.fixture(scope="module")
def zk(broker):
    client = KazooClient(hosts=broker.zk_connect)
    client.start(timeout=30)
    yield client
    client.stop()
    client.close()


def test_api_versions_advertise_2_8_2s_full_ranges(broker) -> None:
    with RawClient(broker.port) as client:
        response = client.request(ApiKeys.API_VERSIONS, 0, req(ApiKeys.API_VERSIONS, 0))
    advertised = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.api_keys}
    for api_key, expected in KAFKA_2_8_2_RANGES.items():
        assert advertised[api_key] == expected, ApiKeys(api_key).name


def _sarama_offset_request_v0(correlation_id: int, topic: str, partition: int, time: int, max_offsets: int) -> bytes:
    """An OffsetRequest v0 byte for byte as Sarama's OffsetRequest.encode writes it (Burrow's
    broker-offset poll): replica id -1, one topic, one partition block (time, max offsets)."""
    client_id = b"burrow-lagchecker"
    body = struct.pack(">i", -1) + struct.pack(">i", 1) + struct.pack(">h", len(topic)) + topic.encode()
    body += struct.pack(">i", 1) + struct.pack(">iqi", partition, time, max_offsets)
    header = struct.pack(">hhih", 2, 0, correlation_id, len(client_id)) + client_id
    return struct.pack(">i", len(header) + len(body)) + header + body


def _read_offset_response_v0(frame: bytes) -> tuple[int, list[int]]:
    """(error code, offsets) of the only partition of a v0 OffsetResponse, read as Sarama does."""
    pos = 4  # correlation id
    (topics,) = struct.unpack_from(">i", frame, pos)
    assert topics == 1
    (name_len,) = struct.unpack_from(">h", frame, pos + 4)
    pos += 6 + name_len
    (partitions,) = struct.unpack_from(">i", frame, pos)
    assert partitions == 1
    _partition, error, count = struct.unpack_from(">ihi", frame, pos + 4)
    offsets = list(struct.unpack_from(f">{count}q", frame, pos + 14))
    assert pos + 14 + 8 * count == len(frame)
    return error, offsets


def test_list_offsets_v0_as_sarama_sends_it(broker) -> None:
    with RawClient(broker.port) as client:
        client.send_bytes(_sarama_offset_request_v0(7, TOPIC, 0, -1, 1))
        frame = client.receive_frame()
        assert struct.unpack_from(">i", frame)[0] == 7
        assert _read_offset_response_v0(frame) == (Errors.NONE.error_code, [RECORDS])
        client.send_bytes(_sarama_offset_request_v0(8, TOPIC, 0, -2, 1))
        assert _read_offset_response_v0(client.receive_frame()) == (Errors.NONE.error_code, [0])
        # the partition nothing was written to: one segment, empty, so latest and earliest are 0
        client.send_bytes(_sarama_offset_request_v0(9, TOPIC, 1, -1, 10))
        assert _read_offset_response_v0(client.receive_frame()) == (Errors.NONE.error_code, [0])
        # several offsets, newest first: the log end and the segment bases
        client.send_bytes(_sarama_offset_request_v0(10, TOPIC, 0, -1, 10))
        assert _read_offset_response_v0(client.receive_frame()) == (Errors.NONE.error_code, [RECORDS, 0])
        client.send_bytes(_sarama_offset_request_v0(11, "no-such-topic", 0, -1, 1))
        assert _read_offset_response_v0(client.receive_frame()) == (
            Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code, [])


def test_list_offsets_v0_through_the_schema(broker) -> None:
    with RawClient(broker.port) as client:
        response = client.request(ApiKeys.LIST_OFFSETS, 0, req(
            ApiKeys.LIST_OFFSETS, 0, replica_id=-1, topics=[{"name": TOPIC, "partitions": [
                {"partition_index": 0, "timestamp": -1, "max_num_offsets": 1}]}]))
    [topic] = response.topics
    [partition] = topic.partitions
    assert (partition.error_code, list(partition.old_style_offsets)) == (Errors.NONE.error_code, [RECORDS])


def _offset_fetch_v0(client: RawClient, group: str, partitions: list[int]):
    response = client.request(ApiKeys.OFFSET_FETCH, 0, req(
        ApiKeys.OFFSET_FETCH, 0, group_id=group, topics=[{"name": TOPIC, "partition_indexes": partitions}]))
    [topic] = response.topics
    return {int(p.partition_index): (int(p.committed_offset), p.error_code) for p in topic.partitions}


def test_offset_commit_v0_is_stored_in_zookeeper(broker, zk) -> None:
    group = "zk-group"
    with RawClient(broker.port) as client:
        response = client.request(ApiKeys.OFFSET_COMMIT, 0, req(
            ApiKeys.OFFSET_COMMIT, 0, group_id=group, topics=[{"name": TOPIC, "partitions": [
                {"partition_index": 0, "committed_offset": 17, "committed_metadata": "m"}]}]))
        [topic] = response.topics
        assert [(p.partition_index, p.error_code) for p in topic.partitions] == [(0, Errors.NONE.error_code)]
        data, _ = zk.get(f"/consumers/{group}/offsets/{TOPIC}/0")
        assert data == b"17"
        assert _offset_fetch_v0(client, group, [0, 1]) == {
            0: (17, Errors.NONE.error_code), 1: (-1, Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code)}
        # over offset.metadata.max.bytes (4096 by default): refused, ZooKeeper unchanged
        response = client.request(ApiKeys.OFFSET_COMMIT, 0, req(
            ApiKeys.OFFSET_COMMIT, 0, group_id=group, topics=[{"name": TOPIC, "partitions": [
                {"partition_index": 0, "committed_offset": 18, "committed_metadata": "x" * 5000}]}]))
        assert response.topics[0].partitions[0].error_code == Errors.OFFSET_METADATA_TOO_LARGE.error_code
        assert zk.get(f"/consumers/{group}/offsets/{TOPIC}/0")[0] == b"17"


def _group_log_end(broker) -> int:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
    try:
        partitions = [TopicPartition("__consumer_offsets", p)
                      for p in consumer.partitions_for_topic("__consumer_offsets")]
        return sum(consumer.end_offsets(partitions).values())
    finally:
        consumer.close()


def test_offset_commit_v0_leaves_kafka_stored_offsets_alone(broker, zk) -> None:
    group = "kafka-group"
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, enable_auto_commit=False)
    try:
        tp = TopicPartition(TOPIC, 0)
        consumer.assign([tp])
        consumer.commit({tp: _offset_and_metadata(5)})
    finally:
        consumer.close()
    before = _group_log_end(broker)
    with RawClient(broker.port) as client:
        response = client.request(ApiKeys.OFFSET_COMMIT, 0, req(
            ApiKeys.OFFSET_COMMIT, 0, group_id=group, topics=[{"name": TOPIC, "partitions": [
                {"partition_index": 0, "committed_offset": 30, "committed_metadata": None}]}]))
        assert response.topics[0].partitions[0].error_code == Errors.NONE.error_code
        # v1 reads Kafka's store, untouched; v0 reads ZooKeeper's
        fetched = client.request(ApiKeys.OFFSET_FETCH, 1, req(
            ApiKeys.OFFSET_FETCH, 1, group_id=group, topics=[{"name": TOPIC, "partition_indexes": [0]}]))
        assert int(fetched.topics[0].partitions[0].committed_offset) == 5
        assert _offset_fetch_v0(client, group, [0]) == {0: (30, Errors.NONE.error_code)}
    assert _group_log_end(broker) == before


def _offset_and_metadata(offset: int):
    from kafka.structs import OffsetAndMetadata

    try:
        return OffsetAndMetadata(offset, "", -1)
    except TypeError:  # kafka-python before 2.1 has no leader epoch
        return OffsetAndMetadata(offset, "")


def test_offset_commit_v1_with_a_commit_timestamp(broker) -> None:
    group = "v1-group"
    with RawClient(broker.port) as client:
        coordinator = client.request(ApiKeys.FIND_COORDINATOR, 0, req(ApiKeys.FIND_COORDINATOR, 0, key=group))
        assert coordinator.error_code in (Errors.NONE.error_code, Errors.COORDINATOR_NOT_AVAILABLE.error_code)

        def commit():
            return client.request(ApiKeys.OFFSET_COMMIT, 1, req(
                ApiKeys.OFFSET_COMMIT, 1, group_id=group, generation_id_or_member_epoch=-1, member_id="",
                topics=[{"name": TOPIC, "partitions": [{"partition_index": 1, "committed_offset": 3,
                                                        "commit_timestamp": 1_600_000_000_000,
                                                        "committed_metadata": "v1"}]}]))

        errors = []

        def committed() -> bool:
            errors.append(commit().topics[0].partitions[0].error_code)
            return errors[-1] == Errors.NONE.error_code

        wait_until(committed, 30, f"OffsetCommit v1 kept failing: {errors[-3:]}", interval=0.2)
        fetched = client.request(ApiKeys.OFFSET_FETCH, 1, req(
            ApiKeys.OFFSET_FETCH, 1, group_id=group, topics=[{"name": TOPIC, "partition_indexes": [1]}]))
        [partition] = fetched.topics[0].partitions
        assert (int(partition.committed_offset), partition.metadata) == (3, "v1")


def test_create_describe_and_delete_topics_at_version_0(broker) -> None:
    with RawClient(broker.port) as client:
        created = client.request(ApiKeys.CREATE_TOPICS, 0, req(
            ApiKeys.CREATE_TOPICS, 0, timeout=30000, topics=[
                {"name": "v0-made", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                 "configs": [{"name": "retention.ms", "value": "123456"}]},
                {"name": "bad name!", "num_partitions": 1, "replication_factor": 1}]))
        assert {t.name: t.error_code for t in created.topics} == {
            "v0-made": Errors.NONE.error_code, "bad name!": Errors.INVALID_TOPIC_EXCEPTION.error_code}
        validated = client.request(ApiKeys.CREATE_TOPICS, 1, req(
            ApiKeys.CREATE_TOPICS, 1, timeout=30000, validate_only=True, topics=[
                {"name": "v1-checked", "num_partitions": 1, "replication_factor": 1}]))
        assert [(t.name, t.error_code, t.error_message) for t in validated.topics] == [
            ("v1-checked", Errors.NONE.error_code, None)]

        described = client.request(ApiKeys.DESCRIBE_CONFIGS, 0, req(
            ApiKeys.DESCRIBE_CONFIGS, 0, resources=[
                {"resource_type": 2, "resource_name": "v0-made", "configuration_keys": None}]))
        [result] = described.results
        assert result.error_code == Errors.NONE.error_code
        configs = {c.name: c for c in result.configs}
        assert (configs["retention.ms"].value, configs["retention.ms"].is_default) == ("123456", False)
        assert configs["segment.bytes"].is_default

        deleted = client.request(ApiKeys.DELETE_TOPICS, 0, req(
            ApiKeys.DELETE_TOPICS, 0, timeout=30000, topic_names=["v0-made", "never-made"]))
        assert {r.name: r.error_code for r in deleted.responses} == {
            "v0-made": Errors.NONE.error_code, "never-made": Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code}
