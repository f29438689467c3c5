"""OffsetForLeaderEpoch (API key 23) and the current-leader-epoch checks of Fetch and ListOffsets,
on one real broker process, over the wire with kafka_py.clients.common.protocol (every version Kafka 2.8 has).

A one-broker partition stays in leader epoch 0; the fencing of older epochs is exercised in
tests/integration/test_replication.py, where elections move the epoch on.
"""
from __future__ import annotations

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from tests.integration.broker_harness import RawClient

# The same tests against a ZooKeeper-mode broker and a KRaft node.
pytestmark = pytest.mark.metadata_modes("zookeeper", "kraft")

TOPIC = "epochs"
RECORDS = 12


@pytest.fixture(scope="module")
def topic(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)], timeout_ms=30000)
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    try:
        for i in range(RECORDS):
            producer.send(TOPIC, f"r{i}".encode(), partition=0).get(timeout=30)
    finally:
        producer.close()
    return TOPIC


def ask(broker, version: int, partitions: list[tuple[str, int, int, int]],
        replica_id: int = -1) -> list[tuple[str, int, Errors, int, int]]:
    """(topic, partition, error, leader epoch, end offset) for each (topic, partition, current
    leader epoch, leader epoch) asked about."""
    by_topic: dict[str, list] = {}
    for t, p, current, epoch in partitions:
        by_topic.setdefault(t, []).append({"partition": p, "current_leader_epoch": current, "leader_epoch": epoch})
    request = build_entity(request_schema(ApiKeys.OFFSET_FOR_LEADER_EPOCH, version), {
        "replica_id": replica_id, "topics": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]})
    with RawClient(broker.port) as client:
        response = client.request(ApiKeys.OFFSET_FOR_LEADER_EPOCH, version, request)
    return [(t.topic, int(p.partition), Errors.for_code(int(p.error_code)), int(getattr(p, "leader_epoch", -1)),
             int(p.end_offset)) for t in response.topics for p in t.partitions]


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_every_version_answers_where_the_epoch_ends(broker, topic, version):
    [answer] = ask(broker, version, [(topic, 0, 0, 0)])
    # v0 has no leader epoch in its answer
    assert answer == (topic, 0, Errors.NONE, 0 if version >= 1 else -1, RECORDS)


def test_the_replica_id_changes_nothing(broker, topic):
    # v3+ carry it; Kafka 2.8 answers a broker that holds no replica, and a consumer, alike
    for replica_id in (-1, 99):
        assert ask(broker, 3, [(topic, 0, 0, 0)], replica_id) == [(topic, 0, Errors.NONE, 0, RECORDS)]


def test_an_epoch_newer_than_any_the_leader_knows(broker, topic):
    # an epoch newer than the latest: nothing known
    assert ask(broker, 4, [(topic, 0, -1, 5)]) == [(topic, 0, Errors.NONE, -1, -1)]


def test_errors_per_partition(broker, topic):
    answers = ask(broker, 4, [(topic, 0, 1, 0), (topic, 7, -1, 0), ("no-such-topic", 0, -1, 0)])
    assert [a[2] for a in answers] == [Errors.UNKNOWN_LEADER_EPOCH, Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                       Errors.UNKNOWN_TOPIC_OR_PARTITION]


def test_fetch_and_list_offsets_check_the_current_leader_epoch(broker, topic):
    fetch = build_entity(request_schema(ApiKeys.FETCH, 12), {
        "replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20, "session_id": 0,
        "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
            {"partition": 0, "current_leader_epoch": 1, "fetch_offset": 0, "last_fetched_epoch": -1,
             "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}]})
    list_offsets = build_entity(request_schema(ApiKeys.LIST_OFFSETS, 6), {
        "replica_id": -1, "topics": [{"name": topic, "partitions": [
            {"partition_index": 0, "current_leader_epoch": 1, "timestamp": -1}]}]})
    with RawClient(broker.port) as client:
        fetched = client.request(ApiKeys.FETCH, 12, fetch)
        listed = client.request(ApiKeys.LIST_OFFSETS, 6, list_offsets)
    assert Errors.for_code(int(fetched.responses[0].partitions[0].error_code)) is Errors.UNKNOWN_LEADER_EPOCH
    assert Errors.for_code(int(listed.topics[0].partitions[0].error_code)) is Errors.UNKNOWN_LEADER_EPOCH
