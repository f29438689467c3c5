"""A broker that sees topics created and deleted for months keeps nothing of them.

A KafkaServer runs in this process (real ZooKeeper) and kafka-python clients in a child
process (tests/integration/client_worker.py), so every object of this process belongs to
the broker or to the test. Topics are created, some with config overrides, some produced
to by an idempotent producer and read by an assigning consumer and by a consumer group
(committed offsets, group joins), then deleted; once each deletion has completed (the
topic gone from ZooKeeper, the metadata cache, the replica manager, and its log
directories from disk), the garbage collector's objects are walked: nothing may still
refer to a deleted topic's name or TopicPartition, nor to the groups that used only those
topics (tests/leak_finder.py names the holder of anything it finds).
"""
from __future__ import annotations

import uuid

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.kafka_server import KafkaServer
from tests.integration.broker_harness import unique_chroot, wait_until
from tests.integration.in_process_state import ClientWorker, in_process_broker, log_dirs_of
from tests.leak_finder import persistent_holders

CYCLES = 8
PARTITIONS = 2


@pytest.fixture(scope="module")
def server(zookeeper, tmp_path_factory):
    with in_process_broker(f"{zookeeper.connect_string}{unique_chroot()}", tmp_path_factory.mktemp("deleted-topics"),
                           overrides={"offsets.topic.replication.factor": "1",
                                      "offsets.topic.num.partitions": "2"}) as server:
        yield server


def _deletion_complete(server: KafkaServer, topic: str) -> bool:
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    return (topic not in server.metadata_cache.get_all_topics()
            and not server.zk_client.topic_exists(topic)
            and not server.zk_client.is_topic_marked_for_deletion(topic)
            and not any(tp in server.replica_manager.all_partitions for tp in tps)
            and not any(server.log_manager.get_log(tp) for tp in tps)
            and topic not in server.kafka_controller.controller_context.all_topics)


def test_deleted_topics_leave_no_state_behind(server):
    marker = f"gone{uuid.uuid4().hex[:8]}"
    topics = [f"{marker}-{i}" for i in range(CYCLES)]
    worker = ClientWorker(f"127.0.0.1:{server.bound_port()}")
    try:
        for i, topic in enumerate(topics):
            configs = ["retention.ms=3600000", "cleanup.policy=compact"] if i % 4 == 1 else []
            worker.call("create", topic, PARTITIONS, *configs)
            wait_until(lambda: all(server.replica_manager.online_partition(TopicPartition(topic, p))
                                   for p in range(PARTITIONS)), 30, f"{topic} not created")
            if i % 2 == 0:
                worker.call("produce", topic, PARTITIONS)
                worker.call("consume", topic, PARTITIONS, f"{marker}-assigned-{i}")
                worker.call("subscribe", topic, PARTITIONS, f"{marker}-group-{i}")
            worker.call("delete", topic)
            wait_until(lambda: _deletion_complete(server, topic), 60, f"{topic} deletion did not complete")
    finally:
        worker.close()
    wait_until(lambda: not log_dirs_of(server, marker), 60, "deleted logs still on disk")

    reports = persistent_holders(topics, markers=[marker], ignore=[topics])
    assert not reports, "state of deleted topics is still held:\n" + "\n".join(map(str, reports))
