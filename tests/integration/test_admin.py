"""kafka-python's admin client against a real broker: topics created (with configs, explicit
assignments, validate-only), described, extended and deleted; topic and broker configs
described and altered."""
from __future__ import annotations

import pytest
from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewPartitions, NewTopic
from kafka.errors import InvalidReplicationFactorError, TopicAlreadyExistsError, UnknownTopicOrPartitionError

from tests.integration.broker_harness import wait_until

# The same tests against a ZooKeeper-mode broker and a KRaft node.
pytestmark = pytest.mark.metadata_modes("zookeeper", "kraft")


@pytest.fixture(scope="module")
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    yield client
    client.close()


def partitions_of(admin, topic: str) -> dict[int, dict]:
    [described] = admin.describe_topics([topic])
    assert described["error_code"] == 0
    return {p["partition_index"]: p for p in described["partitions"]}


def test_create_describe_delete_topic(broker, admin):
    result = admin.create_topics([NewTopic("orders", 3, 1, topic_configs={"retention.ms": "3600000",
                                                                            "cleanup.policy": "delete"})])
    [created] = result["topics"]
    assert created["error_code"] == 0
    assert created["num_partitions"] == 3 and created["replication_factor"] == 1
    assert created["configs"]["retention.ms"]["value"] == "3600000"
    assert "orders" in admin.list_topics()
    partitions = partitions_of(admin, "orders")
    assert sorted(partitions) == [0, 1, 2]
    for p in partitions.values():
        assert p["leader_id"] == 0 and p["replica_nodes"] == [0] and p["isr_nodes"] == [0]
    # the logs exist on disk, in Kafka's layout (a KRaft broker publishes the new metadata
    # to its cache before its replica manager creates the logs, as Kafka's does)
    wait_until(lambda: {f"orders-{p}" for p in range(3)} <= {d.name for d in broker.log_dir.iterdir()},
               30, "the logs of the new topic were not created")

    with pytest.raises(TopicAlreadyExistsError):
        admin.create_topics([NewTopic("orders", 1, 1)])

    result = admin.delete_topics(["orders"])
    assert [t["error_code"] for t in result["topics"]] == [0]
    assert "orders" not in admin.list_topics()
    # the controller's StopReplica removes the logs (renamed for deletion, then deleted)
    wait_until(lambda: not any(d.name.startswith("orders-") and not d.name.endswith("-delete")
                               for d in broker.log_dir.iterdir()), 30, "logs of deleted topic remain")
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.delete_topics(["orders"])


def test_create_with_assignment_validate_only_and_bad_replication_factor(admin):
    result = admin.create_topics([NewTopic("assigned", replica_assignments={0: [0], 1: [0]})])
    assert result["topics"][0]["error_code"] == 0
    assert sorted(partitions_of(admin, "assigned")) == [0, 1]

    result = admin.create_topics([NewTopic("validated", 2, 1)], validate_only=True)
    assert result["topics"][0]["error_code"] == 0
    assert "validated" not in admin.list_topics()

    with pytest.raises(InvalidReplicationFactorError):
        admin.create_topics([NewTopic("too-many-replicas", 1, 3)])
    assert "too-many-replicas" not in admin.list_topics()


def test_create_partitions_then_produce_to_them(broker, admin):
    admin.create_topics([NewTopic("growing", 1, 1)])
    result = admin.create_partitions({"growing": NewPartitions(4)})
    assert [r.error_code for r in result.results] == [0]
    assert sorted(partitions_of(admin, "growing")) == [0, 1, 2, 3]
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    try:
        assert producer.send("growing", value=b"x", partition=3).get(timeout=30).partition == 3
    finally:
        producer.close()


def test_describe_and_alter_topic_configs(admin):
    admin.create_topics([NewTopic("configured", 1, 1, topic_configs={"segment.bytes": "1048576"})])
    resource = ConfigResource(ConfigResourceType.TOPIC, "configured")
    configs = admin.describe_configs([resource], config_filter="all")["topic"]["configured"]
    assert configs["segment.bytes"]["value"] == "1048576"
    assert configs["segment.bytes"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    assert configs["retention.ms"]["value"] == "604800000"
    assert configs["retention.ms"]["config_source"] == "DEFAULT_CONFIG"

    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "configured",
                                        configs={"retention.ms": "1000000", "max.message.bytes": "2000000"})])
    configs = admin.describe_configs([resource], config_filter="all")["topic"]["configured"]
    assert configs["retention.ms"]["value"] == "1000000"
    assert configs["max.message.bytes"]["value"] == "2000000"
    # incremental SET leaves the other overrides alone
    assert configs["segment.bytes"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"

    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "configured",
                                        configs={"segment.bytes": ("DELETE", None)})])
    configs = admin.describe_configs([resource], config_filter="all")["topic"]["configured"]
    assert configs["segment.bytes"]["config_source"] == "DEFAULT_CONFIG"
    assert configs["segment.bytes"]["value"] == "1073741824"


def test_topic_config_change_reaches_the_live_log(broker, admin):
    admin.create_topics([NewTopic("resized", 1, 1)])
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "resized",
                                        configs={"max.message.bytes": "3000000"})])
    record = b"r" * 2_000_000  # over the broker default, under the new topic limit
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, enable_idempotence=False, acks=1, retries=0,
                             max_request_size=4 * 1024 * 1024)
    results = []

    def accepted() -> bool:
        # The broker applies the change when its DynamicConfigManager sees the notification.
        try:
            results.append(producer.send("resized", value=record).get(timeout=30))
            return True
        except Exception:  # noqa: BLE001 - MESSAGE_TOO_LARGE until then
            return False

    try:
        wait_until(accepted, 30, "topic max.message.bytes never applied", interval=0.2)
    finally:
        producer.close()
    assert results[-1].serialized_value_size == len(record)


def test_describe_broker_configs(admin):
    configs = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "0")], config_filter="all")["broker"]["0"]
    assert configs["num.io.threads"]["value"] == "4"
    assert configs["num.io.threads"]["config_source"] == "STATIC_BROKER_CONFIG"
    assert configs["log.retention.hours"]["value"] == "168"


def test_delete_records_moves_the_log_start_offset(broker, admin):
    from kafka import KafkaConsumer, TopicPartition

    admin.create_topics([NewTopic("trimmed", 1, 1)])
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    try:
        for i in range(10):
            producer.send("trimmed", value=f"{i}".encode())
        producer.flush()
    finally:
        producer.close()
    tp = TopicPartition("trimmed", 0)
    result = admin.delete_records({tp: 6})
    assert result[tp]["low_watermark"] == 6
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
    try:
        assert consumer.beginning_offsets([tp]) == {tp: 6}
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        assert [r.value for r in consumer.poll(timeout_ms=10000)[tp]] == [b"6", b"7", b"8", b"9"]
    finally:
        consumer.close()


def test_configs_given_at_creation_apply_to_the_new_log(broker, admin):
    # The overrides live in /config/topics/<t> with no change notification: the broker must
    # read them when it creates the log (Kafka's Partition.createLog), not after a restart.
    admin.create_topics([NewTopic("small-segments", 1, 1, topic_configs={"segment.bytes": "1024"})])
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1, linger_ms=0)
    try:
        for i in range(12):
            producer.send("small-segments", value=bytes([i]) * 300).get(timeout=30)
    finally:
        producer.close()
    segments = list((broker.log_dir / "small-segments-0").glob("*.log"))
    # 12 batches of ~370 bytes cannot fit one 1 KiB segment
    assert len(segments) >= 4, segments
