"""controller_mutation_rate (KIP-599) against a broker process: CreateTopics, CreatePartitions
and DeleteTopics charge the partitions they mutate to the client's token bucket; the versions
that know THROTTLING_QUOTA_EXCEEDED (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+)
get it per topic once the bucket is empty, older ones are served and told to wait in
throttle_time_ms.

The quota is 0.1 partition/s over controller.quota.window.num=2 windows of 10 s: a bucket of
2 partitions that takes 10 s to win one back, so nothing here depends on how fast the
requests follow each other. Each request goes on a fresh connection (a throttled one is
muted for the throttle time)."""
from __future__ import annotations

import pytest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.clients.common.protocol.entities import build_entity
from tests.integration.broker_harness import BrokerProcess, RawClient, unique_chroot, wait_until

CLIENT = "mutator"
THROTTLED = Errors.THROTTLING_QUOTA_EXCEEDED.error_code


@pytest.fixture(scope="module")
def broker(zookeeper, tmp_path_factory):
    b = BrokerProcess(tmp_path_factory.mktemp("mutation-quota-broker"), zookeeper.connect_string, unique_chroot(),
                      overrides={"controller.quota.window.num": "2", "controller.quota.window.size.seconds": "10"})
    b.start()
    yield b
    if b.running:
        assert b.stop() == 0, b.tail()


def _request(broker, api: ApiKeys, version: int, client_id: str = CLIENT, **values):
    with RawClient(broker.port, client_id=client_id) as client:
        return client.request(api, version, build_entity(request_schema(api, version), values))


def _create(broker, version: int, topics: dict[str, int], client_id: str = CLIENT):
    response = _request(broker, ApiKeys.CREATE_TOPICS, version, client_id, timeout=30000, topics=[
        {"name": n, "num_partitions": p, "replication_factor": 1} for n, p in topics.items()])
    return {t.name: int(t.error_code) for t in response.topics}, response


def _throttle_ms(response) -> int:
    value = response.throttle_time
    return int(value.total_seconds() * 1000) if hasattr(value, "total_seconds") else int(value)


def test_partitions_mutated_are_held_to_the_rate(broker) -> None:
    alter = _request(broker, ApiKeys.ALTER_CLIENT_QUOTAS, 1, validate_only=False, entries=[{
        "entity": [{"entity_type": "client-id", "entity_name": CLIENT}],
        "ops": [{"key": "controller_mutation_rate", "value": 0.1, "remove": False}]}])
    assert [int(e.error_code) for e in alter.entries] == [0]
    wait_until(lambda: "Changing ControllerMutation quota" in broker.output(), 30, "quota never applied")

    # v6, strict: 'a' (3 partitions) empties the bucket of 2 and is accepted; 'b' is refused
    errors, response = _create(broker, 6, {"cmq-a": 3, "cmq-b": 1})
    assert errors == {"cmq-a": 0, "cmq-b": THROTTLED}, response
    assert _throttle_ms(response) > 5000  # ~10 s to win back the missing partition
    # a client without the quota is not affected
    assert _create(broker, 6, {"cmq-free": 5}, client_id="someone-else")[0] == {"cmq-free": 0}

    # CreatePartitions v3 and DeleteTopics v5: strict as well, nothing changed
    response = _request(broker, ApiKeys.CREATE_PARTITIONS, 3, timeout=30000, validate_only=False,
                        topics=[{"name": "cmq-a", "count": 4, "assignments": None}])
    assert [int(r.error_code) for r in response.results] == [THROTTLED]
    assert _throttle_ms(response) > 5000
    response = _request(broker, ApiKeys.DELETE_TOPICS, 5, timeout=30000, topic_names=["cmq-a"])
    assert [(r.name, int(r.error_code)) for r in response.responses] == [("cmq-a", THROTTLED)]
    metadata = _request(broker, ApiKeys.METADATA, 9, topics=[{"name": "cmq-a"}], allow_auto_topic_creation=False,
                        include_cluster_authorized_operations=False, include_topic_authorized_operations=False)
    assert [len(t.partitions) for t in metadata.topics] == [3]

    # older versions, permissive: served, and told how long to wait
    errors, response = _create(broker, 5, {"cmq-c": 1})
    assert errors == {"cmq-c": 0}
    assert _throttle_ms(response) > 5000
    response = _request(broker, ApiKeys.DELETE_TOPICS, 4, timeout=30000, topic_names=["cmq-c"])
    assert [int(r.error_code) for r in response.responses] == [0]
    assert _throttle_ms(response) > 5000

    # the quota removed: no more throttling
    alter = _request(broker, ApiKeys.ALTER_CLIENT_QUOTAS, 1, validate_only=False, entries=[{
        "entity": [{"entity_type": "client-id", "entity_name": CLIENT}],
        "ops": [{"key": "controller_mutation_rate", "value": 0.0, "remove": True}]}])
    assert [int(e.error_code) for e in alter.entries] == [0]
    wait_until(lambda: "Removing ControllerMutation quota" in broker.output(), 30, "quota never removed")
    errors, response = _create(broker, 6, {"cmq-d": 8})
    assert errors == {"cmq-d": 0} and _throttle_ms(response) == 0
