"""MetadataCache (server/metadata_cache.py) fed with real UpdateMetadata request objects."""
from __future__ import annotations

import threading
import uuid

from kafka_py.core.cluster.broker import ListenerName, SecurityProtocol
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.schema.update_metadata.v0 import request as um0
from kafka_py.clients.common.protocol.schema.update_metadata.v1 import request as um1
from kafka_py.clients.common.protocol.schema.update_metadata.v7 import request as um7
from kafka_py.server.metadata_cache import NO_NODE, MetadataCache

PLAINTEXT = SecurityProtocol.PLAINTEXT.id


def broker(broker_id: int, listeners=("PLAINTEXT",), rack=None) -> um7.UpdateMetadataBroker:
    endpoints = tuple(um7.UpdateMetadataEndpoint(port=9092 + 10 * i + broker_id, host=f"host{broker_id}",
                                                 listener=name, security_protocol=PLAINTEXT)
                      for i, name in enumerate(listeners))
    return um7.UpdateMetadataBroker(id=broker_id, endpoints=endpoints, rack=rack)


def pstate(partition: int, leader: int, replicas, isr=None, leader_epoch: int = 0, offline=()):
    return um7.UpdateMetadataPartitionState(partition_index=partition, controller_epoch=1, leader=leader,
                                            leader_epoch=leader_epoch, isr=tuple(isr if isr is not None else replicas),
                                            zk_version=0, replicas=tuple(replicas), offline_replicas=tuple(offline))


def request(topics: dict, brokers, controller_id: int = 0, topic_ids: dict | None = None):
    topic_states = tuple(um7.UpdateMetadataTopicState(topic_name=name,
                                                      topic_id=(topic_ids or {}).get(name, uuid.UUID(int=0)),
                                                      partition_states=tuple(states))
                         for name, states in topics.items())
    return um7.UpdateMetadataRequest(controller_id=controller_id, controller_epoch=1, broker_epoch=-1,
                                     topic_states=topic_states, live_brokers=tuple(brokers))


def test_update_metadata_then_topic_metadata() -> None:
    cache = MetadataCache(0)
    assert cache.get_topic_metadata(["t"], "PLAINTEXT") == []
    tid = uuid.uuid4()
    deleted = cache.update_metadata(1, request(
        {"t": [pstate(0, 0, [0, 1]), pstate(1, 1, [1, 0], isr=[1])]}, [broker(0), broker(1)],
        controller_id=1, topic_ids={"t": tid}))
    assert deleted == []
    [topic] = cache.get_topic_metadata(["t", "missing"], ListenerName("PLAINTEXT"))
    assert topic.name == "t" and topic.error is Errors.NONE and topic.topic_id == tid and not topic.is_internal
    by_partition = {p.partition_index: p for p in topic.partitions}
    assert by_partition[0].leader_id == 0 and by_partition[0].replica_nodes == (0, 1)
    assert by_partition[1].leader_id == 1 and by_partition[1].isr_nodes == (1,)
    assert all(p.error is Errors.NONE for p in topic.partitions)

    assert cache.get_all_topics() == {"t"}
    assert cache.get_all_partitions() == {TopicPartition("t", 0), TopicPartition("t", 1)}
    assert cache.contains("t") and cache.contains(TopicPartition("t", 1))
    assert not cache.contains(TopicPartition("t", 2)) and not cache.contains_topic("u")
    assert cache.num_partitions("t") == 2 and cache.num_partitions("u") is None
    assert cache.get_controller_id() == 1
    assert sorted(b.id for b in cache.get_alive_brokers()) == [0, 1]
    assert cache.get_alive_broker(1).end_point("PLAINTEXT").host == "host1"
    assert cache.get_alive_broker(7) is None
    assert cache.get_partition_info("t", 1).isr == (1,)
    assert cache.get_partition_info(TopicPartition("t", 0)).leader == 0
    assert cache.get_non_existing_topics({"t", "x"}) == {"x"}
    assert sorted(n.id for n in cache.get_alive_broker_nodes("PLAINTEXT")) == [0, 1]


def test_leader_endpoint_and_missing_listener() -> None:
    cache = MetadataCache(0)
    cache.update_metadata(1, request({"t": [pstate(0, 1, [1, 0])]},
                                     [broker(0, ("PLAINTEXT", "INTERNAL")), broker(1, ("INTERNAL",))]))
    node = cache.get_partition_leader_endpoint("t", 0, "INTERNAL")
    assert node.id == 1 and node.host == "host1"
    # the leader is alive but has no such listener: Kafka's Node.noNode()
    assert cache.get_partition_leader_endpoint("t", 0, "PLAINTEXT") == NO_NODE
    assert cache.get_partition_leader_endpoint("t", 5, "PLAINTEXT") is None

    [old] = cache.get_topic_metadata(["t"], "PLAINTEXT")
    assert old.partitions[0].error is Errors.LEADER_NOT_AVAILABLE and old.partitions[0].leader_id == -1
    [new] = cache.get_topic_metadata(["t"], "PLAINTEXT", error_unavailable_listeners=True)
    assert new.partitions[0].error is Errors.LISTENER_NOT_FOUND
    assert cache.get_partition_replica_endpoints(TopicPartition("t", 0), "PLAINTEXT") == {
        0: cache.get_alive_broker(0).node("PLAINTEXT")}


def test_dead_leader_and_unavailable_replicas() -> None:
    cache = MetadataCache(0)
    cache.update_metadata(1, request({"t": [pstate(0, 2, [2, 0]), pstate(1, 0, [0, 2], offline=[2])]}, [broker(0)]))
    [topic] = cache.get_topic_metadata(["t"], "PLAINTEXT")
    p0, p1 = sorted(topic.partitions, key=lambda p: p.partition_index)
    assert p0.error is Errors.LEADER_NOT_AVAILABLE and p0.leader_id == -1 and p0.replica_nodes == (2, 0)
    assert p1.error is Errors.NONE and p1.offline_replicas == (2,)
    # Metadata v0: replicas without an address are dropped and flagged
    [v0] = cache.get_topic_metadata(["t"], "PLAINTEXT", error_unavailable_endpoints=True)
    p1_v0 = [p for p in v0.partitions if p.partition_index == 1][0]
    assert p1_v0.error is Errors.REPLICA_NOT_AVAILABLE and p1_v0.replica_nodes == (0,) and p1_v0.isr_nodes == (0,)


def test_partial_updates_merge_and_deletion() -> None:
    cache = MetadataCache(0)
    tid = uuid.uuid4()
    cache.update_metadata(1, request({"a": [pstate(0, 0, [0]), pstate(1, 0, [0])], "b": [pstate(0, 0, [0])]},
                                     [broker(0)], topic_ids={"a": tid}))
    # a partial update: only a-1 changes, the rest stays
    cache.update_metadata(2, request({"a": [pstate(1, 0, [0], leader_epoch=5)]}, [broker(0)]))
    assert cache.get_partition_info("a", 1).leader_epoch == 5
    assert cache.get_partition_info("a", 0).leader_epoch == 0 and cache.contains("b")
    assert cache.get_topic_metadata(["a"], "PLAINTEXT")[0].topic_id == tid

    # LeaderDuringDelete (-2) removes partitions; the last one takes the topic (and its id) along
    deleted = cache.update_metadata(3, request({"a": [pstate(0, -2, [0]), pstate(1, -2, [0])]}, [broker(0)]))
    assert sorted(deleted) == [TopicPartition("a", 0), TopicPartition("a", 1)]
    assert cache.get_all_topics() == {"b"}
    assert cache.get_topic_metadata(["a"], "PLAINTEXT") == []

    # no partition states: brokers and controller are still replaced
    cache.update_metadata(4, request({}, [broker(0), broker(3)], controller_id=-1))
    assert cache.get_controller_id() is None
    assert cache.has_alive_broker(3) and cache.contains("b")


def test_cluster_metadata_skips_partitions_being_deleted() -> None:
    cache = MetadataCache(0)
    cache.update_metadata(1, request({"t": [pstate(0, 0, [0, 1])], "__consumer_offsets": [pstate(0, 1, [1])]},
                                     [broker(0), broker(1)], controller_id=1))
    cluster = cache.get_cluster_metadata("cid", "PLAINTEXT")
    assert cluster.cluster_id == "cid" and cluster.controller.id == 1
    assert sorted(n.id for n in cluster.nodes) == [0, 1]
    assert cluster.internal_topics == frozenset({"__consumer_offsets"})
    assert cluster.leader_for(TopicPartition("t", 0)).id == 0
    [meta] = cache.get_topic_metadata(["__consumer_offsets"], "PLAINTEXT")
    assert meta.is_internal


def test_old_request_versions() -> None:
    cache = MetadataCache(0)
    v0 = um0.UpdateMetadataRequest(
        controller_id=0, controller_epoch=1,
        ungrouped_partition_states=(um0.UpdateMetadataPartitionState(
            topic_name="t", partition_index=0, controller_epoch=1, leader=0, leader_epoch=3, isr=(0,), zk_version=1,
            replicas=(0,)),),
        live_brokers=(um0.UpdateMetadataBroker(id=0, v0_host="h", v0_port=1234),))
    cache.update_metadata(1, v0)
    node = cache.get_partition_leader_endpoint("t", 0, "PLAINTEXT")
    assert (node.host, node.port) == ("h", 1234)
    assert cache.get_partition_info("t", 0).leader_epoch == 3

    v1 = um1.UpdateMetadataRequest(
        controller_id=0, controller_epoch=1, ungrouped_partition_states=(),
        live_brokers=(um1.UpdateMetadataBroker(id=0, endpoints=(um1.UpdateMetadataEndpoint(
            port=99, host="h1", security_protocol=SecurityProtocol.SSL.id),)),))
    cache.update_metadata(2, v1)
    # versions 1-2 name the listener after the security protocol
    assert cache.get_alive_broker(0).end_point("SSL").port == 99
    assert cache.get_partition_leader_endpoint("t", 0, "SSL").port == 99


def test_readers_never_see_half_an_update() -> None:
    """Every update moves all partitions to the same leader epoch; a reader must see one epoch."""
    cache = MetadataCache(0)
    partitions = 50
    cache.update_metadata(0, request({"t": [pstate(p, 0, [0]) for p in range(partitions)]}, [broker(0)]))
    stop = threading.Event()
    mixed: list = []

    def reader() -> None:
        while not stop.is_set():
            [topic] = cache.get_topic_metadata(["t"], "PLAINTEXT")
            epochs = {p.leader_epoch for p in topic.partitions}
            if len(epochs) != 1 or len(topic.partitions) != partitions:
                mixed.append(epochs)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for epoch in range(1, 200):
            cache.update_metadata(epoch, request({"t": [pstate(p, 0, [0], leader_epoch=epoch)
                                                         for p in range(partitions)]}, [broker(0)]))
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert mixed == []
    assert {p.leader_epoch for p in cache.get_topic_metadata(["t"], "PLAINTEXT")[0].partitions} == {199}
