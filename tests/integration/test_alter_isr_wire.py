"""AlterIsr (API key 56) on the wire, sent by a raw client to a real broker process that is
its cluster's controller: every refusal is Kafka's error code in the answer, the partition
state znode stays as it was, and the broker goes on serving."""
from __future__ import annotations

import json

import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.schema.alter_isr.v0.request import AlterIsrRequest, PartitionData, TopicData
from tests.integration.broker_harness import RawClient, wait_until

TOPIC = "wire-isr"


@pytest.fixture(scope="module")
def topic(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
    finally:
        admin.close()
    zk = broker.zk()
    path = f"/brokers/topics/{TOPIC}/partitions/0/state"
    wait_until(lambda: zk.exists(path) is not None, 30, "the partition has a state")
    yield zk, path
    zk.stop()
    zk.close()


def broker_epoch(broker, zk) -> int:
    _, stat = zk.get(f"/brokers/ids/{broker.broker_id}")
    return stat.czxid


def alter_isr(broker, broker_id: int, epoch: int, partitions: list[tuple[str, int, int, tuple[int, ...], int]]):
    by_topic: dict[str, list[PartitionData]] = {}
    for name, partition, leader_epoch, isr, version in partitions:
        by_topic.setdefault(name, []).append(PartitionData(partition_index=partition, leader_epoch=leader_epoch,
                                                           new_isr=isr, current_isr_version=version))
    request = AlterIsrRequest(broker_id=broker_id, broker_epoch=epoch, topics=tuple(
        TopicData(name=name, partitions=tuple(parts)) for name, parts in by_topic.items()))
    with RawClient(broker.port, timeout=15) as client:
        return client.request(ApiKeys.ALTER_ISR, 0, request)


def answers(response) -> dict[tuple[str, int], tuple[Errors, tuple[int, ...], int]]:
    return {(t.name, p.partition_index): (Errors.for_code(int(p.error_code)), tuple(p.isr), int(p.current_isr_version))
            for t in response.topics for p in t.partitions}


def state(zk, path):
    data, stat = zk.get(path)
    return json.loads(data), stat.version


def test_alter_isr_is_advertised(broker):
    from kafka_py.clients.common.protocol.messages import request_schema

    request = request_schema(ApiKeys.API_VERSIONS, 3)(client_software_name="t", client_software_version="1")
    with RawClient(broker.port) as client:
        response = client.request(ApiKeys.API_VERSIONS, 3, request)
    [entry] = [k for k in response.api_keys if int(k.api_key) == ApiKeys.ALTER_ISR.id]
    assert (int(entry.min_version), int(entry.max_version)) == (0, 0)


def test_refusals_change_nothing_and_a_resent_state_is_answered_with_itself(broker, topic):
    zk, path = topic
    before, version = state(zk, path)
    epoch = broker_epoch(broker, zk)
    leader_epoch = before["leader_epoch"]

    stale = alter_isr(broker, 0, epoch - 1, [(TOPIC, 0, leader_epoch, (0,), version)])
    assert Errors.for_code(int(stale.error_code)) is Errors.STALE_BROKER_EPOCH and stale.topics == ()
    unknown_broker = alter_isr(broker, 7, epoch, [(TOPIC, 0, leader_epoch, (0,), version)])
    assert Errors.for_code(int(unknown_broker.error_code)) is Errors.STALE_BROKER_EPOCH

    response = alter_isr(broker, 0, epoch, [
        (TOPIC, 0, leader_epoch - 1, (0,), version),  # an old leader epoch
        ("no-such-topic", 0, 0, (0,), 0),
    ])
    assert Errors.for_code(int(response.error_code)) is Errors.NONE
    found = answers(response)
    assert found[(TOPIC, 0)][0] is Errors.FENCED_LEADER_EPOCH
    assert found[("no-such-topic", 0)][0] is Errors.UNKNOWN_TOPIC_OR_PARTITION
    for isr in ((0, 5), (), (0, 0)):
        bad = answers(alter_isr(broker, 0, epoch, [(TOPIC, 0, leader_epoch, isr, version)]))
        assert bad[(TOPIC, 0)][0] is Errors.INVALID_REQUEST, isr
    assert state(zk, path) == (before, version)

    # The state it already has: answered with it, nothing written.
    same = answers(alter_isr(broker, 0, epoch, [(TOPIC, 0, leader_epoch, tuple(before["isr"]), version)]))
    assert same[(TOPIC, 0)] == (Errors.NONE, tuple(before["isr"]), version)
    assert state(zk, path) == (before, version)
    # and the broker still serves
    assert broker.knows_itself()
