"""Consumers fetching from the closest replica (KIP-392) on a three-broker cluster whose brokers
are in racks r0, r1 and r2, with ``replica.selector.class`` set to Kafka's
RackAwareReplicaSelector and one partition led by broker 0 and followed by 1 and 2:

* the leader sends a consumer of rack r2 to broker 2 (``preferred_read_replica``, no records),
  and broker 2 serves that consumer's Fetch; a consumer in the leader's rack, or in no rack, is
  served by the leader; a consumer too old to name its rack (Fetch v10) reads leaders only;
* librdkafka with ``client.rack=r2`` follows the leader's answer: it reads every record, in
  order, and broker 2 counts consumer fetches of the topic;
* a ``replica.selector.class`` that names no class stops startup naming the key.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from tests.integration.broker_harness import ROOT, BrokerProcess, RawClient, free_port, unique_chroot, wait_until
from tests.integration.replicated_cluster import CLUSTER_PROPS, ReplicatedCluster
from tests.integration.test_metrics import scrape, value

confluent_kafka = pytest.importorskip("confluent_kafka")

WAIT = 90.0
TOPIC = "closest-replica"
COUNT = 50
SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    chroot = unique_chroot("follower-fetching")
    brokers = []
    for i in range(3):
        port = free_port()
        b = BrokerProcess(tmp_path_factory.mktemp(f"ff-broker{i}-"), zookeeper.connect_string, chroot, i,
                          overrides=dict(CLUSTER_PROPS, **{"broker.rack": f"r{i}", "replica.selector.class": SELECTOR,
                                                           "kafka.py.metrics.prometheus.port": str(port),
                                                           "kafka.py.metrics.prometheus.host": "127.0.0.1"}))
        b.metrics_port = port
        brokers.append(b)
    c = ReplicatedCluster(brokers).start()
    c.create_topic(TOPIC, {0: [0, 1, 2]})
    c.wait_fully_replicated(TOPIC, 1)
    producer = confluent_kafka.Producer({"bootstrap.servers": ",".join(c.bootstrap()), "acks": "all"})
    for i in range(COUNT):
        producer.produce(TOPIC, value=b"v%d" % i, key=b"k%d" % i, partition=0)
    assert producer.flush(60) == 0
    # every replica's high watermark at the end, so a follower serves all of it
    wait_until(lambda: all(fetch(b, "", 12).high_watermark == COUNT for b in brokers[1:]), WAIT,
               "the followers never learnt the high watermark")
    yield c
    for b in brokers:
        if b.running:
            b.stop()
    c.close()


def fetch(broker: BrokerProcess, rack: str, version: int = 12, offset: int = 0):
    """A consumer's Fetch of the topic's partition 0 from ``broker``; its one partition answer."""
    values = {"replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20,
              "topics": [{"topic": TOPIC, "partitions": [{"partition": 0, "fetch_offset": offset,
                                                         "partition_max_bytes": 1 << 20}]}]}
    if version >= 4:
        values["isolation_level"] = 0
    if version >= 7:
        values.update(session_id=0, session_epoch=-1, forgotten_topics_data=[])
    if version >= 11:
        values["rack_id"] = rack
    for partition in values["topics"][0]["partitions"]:
        if version >= 5:
            partition["log_start_offset"] = -1
        if version >= 9:
            partition["current_leader_epoch"] = -1
        if version >= 12:
            partition["last_fetched_epoch"] = -1
    with RawClient(broker.port) as client:
        response = client.request(ApiKeys.FETCH, version, build_entity(request_schema(ApiKeys.FETCH, version),
                                                                        values))
    [topic] = response.responses
    [partition] = topic.partitions
    return partition


def record_count(partition) -> int:
    from kafka_py.clients.common.record.memory_records import MemoryRecords

    records = MemoryRecords(bytes(partition.records or b""))
    return sum(1 for batch in records.batches() for _ in batch.records())


def test_the_leader_sends_a_consumer_to_the_replica_in_its_rack(cluster):
    leader, _, in_r2 = cluster.brokers
    sent = fetch(leader, "r2")
    assert Errors.for_code(int(sent.error_code)) is Errors.NONE
    assert int(sent.preferred_read_replica) == 2
    assert record_count(sent) == 0 and int(sent.high_watermark) == COUNT

    served = fetch(in_r2, "r2")
    assert Errors.for_code(int(served.error_code)) is Errors.NONE
    assert int(served.preferred_read_replica) == -1
    assert record_count(served) == COUNT

    # the leader's own rack, and no rack: the leader serves
    for rack in ("r0", ""):
        here = fetch(leader, rack)
        assert int(here.preferred_read_replica) == -1 and record_count(here) == COUNT, rack
    # a rack no replica is in: the leader too
    assert int(fetch(leader, "elsewhere").preferred_read_replica) == -1
    # a consumer too old for KIP-392 reads from leaders only
    assert Errors.for_code(int(fetch(in_r2, "", version=10).error_code)) is Errors.NOT_LEADER_OR_FOLLOWER


def test_librdkafka_in_rack_r2_reads_everything_from_broker_2(cluster):
    in_r2 = cluster.brokers[2]

    def consumer_fetches_on_broker_2() -> float:
        return value(scrape(in_r2.metrics_port), "kafka_server_brokertopicmetrics_totalfetchrequests_total",
                     topic=TOPIC)

    before = consumer_fetches_on_broker_2()
    consumer = confluent_kafka.Consumer({"bootstrap.servers": cluster.brokers[0].bootstrap, "group.id": "ff-r2",
                                         "client.rack": "r2", "auto.offset.reset": "earliest",
                                         "enable.auto.commit": False})
    got = []
    try:
        consumer.assign([confluent_kafka.TopicPartition(TOPIC, 0, 0)])
        for _ in range(120):
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.append((message.offset(), message.key(), message.value()))
            if len(got) >= COUNT:
                break
    finally:
        consumer.close()
    assert got == [(i, b"k%d" % i, b"v%d" % i) for i in range(COUNT)]
    assert consumer_fetches_on_broker_2() > before


def test_a_replica_selector_that_names_no_class_stops_startup(zookeeper, tmp_path):
    config = tmp_path / "server.properties"
    config.write_text(f"zookeeper.connect={zookeeper.connect_string}{unique_chroot('ff-bad')}\n"
                      f"log.dirs={tmp_path / 'logs'}\nlisteners=PLAINTEXT://127.0.0.1:{free_port()}\n"
                      "replica.selector.class=NoSuchSelector\n")
    result = subprocess.run([sys.executable, "-m", "kafka_py.core.kafka", str(config)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "replica.selector.class" in result.stderr and "NoSuchSelector" in result.stderr, result.stderr[-3000:]
