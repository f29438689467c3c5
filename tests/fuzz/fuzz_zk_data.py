"""Fuzz target: the bytes of every znode the broker reads, through its decoder in
kafka_py/core/zk/zk_data.py. The first byte picks the decoder; the rest is the znode's data.

Contract: the data decodes, or ValueError (JSON that does not parse, or that lacks or
mistypes a field: what Kafka's Json and its JsonMappingException refuse) or KafkaException
is raised; the caller logs it and skips the znode or fails the operation naming it.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from kafka_py.clients.common.errors import KafkaException
from kafka_py.core.zk import zk_data as z

class _Stat:
    """The znode stat a partition state decodes with (kazoo's ZnodeStat: its version)."""

    version = 4


_STAT = _Stat()

_DECODERS: list[tuple[str, Callable[[bytes], Any]]] = [
    ("controller", z.ControllerZNode.decode),
    ("controller_epoch", z.ControllerEpochZNode.decode),
    ("broker_id", lambda d: z.BrokerIdZNode.decode(0, d)),
    ("topic", lambda d: z.TopicZNode.decode("topic", d)),
    ("partition_state", lambda d: z.TopicPartitionStateZNode.decode(d, _STAT)),
    ("config_entity", z.ConfigEntityZNode.decode),
    ("config_change", z.ConfigEntityChangeNotificationSequenceZNode.decode),
    ("isr_change", z.IsrChangeNotificationSequenceZNode.decode),
    ("log_dir_event", z.LogDirEventNotificationSequenceZNode.decode),
    ("reassign_partitions", z.ReassignPartitionsZNode.decode),
    ("preferred_replica_election", z.PreferredReplicaElectionZNode.decode),
    ("consumer_offset", z.ConsumerOffset.decode),
    ("literal_acl_change", z.LITERAL_ACL_CHANGE_STORE.decode),
    ("extended_acl_change", z.EXTENDED_ACL_CHANGE_STORE.decode),
    ("acls", lambda d: z.ResourceZNode.decode(d, 0)),
    ("cluster_id", z.ClusterIdZNode.from_json),
    ("producer_id_block", z.ProducerIdBlockZNode.decode),
    ("feature", z.FeatureZNode.decode),
]
_INDEX = {name: i for i, (name, _) in enumerate(_DECODERS)}


def one_input(data: bytes) -> None:
    if not data:
        return
    _, decode = _DECODERS[data[0] % len(_DECODERS)]
    try:
        decode(data[1:])
    except (ValueError, KafkaException):
        pass


# The JSON Kafka 2.8.2 writes to each znode (core/.../kafka/zk/ZkData.scala).
_SEEDS = {
    "controller": b'{"version":1,"brokerid":0,"timestamp":"1700000000000"}',
    "controller_epoch": b"7",
    "broker_id": b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
                 b'"endpoints":["PLAINTEXT://127.0.0.1:9092"],"jmx_port":-1,"port":9092,"host":"127.0.0.1",'
                 b'"version":5,"timestamp":"1700000000000","rack":"r1"}',
    "topic": b'{"version":3,"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":{"0":[0,1],"1":[1,0]},'
             b'"adding_replicas":{"0":[1]},"removing_replicas":{}}',
    "partition_state": b'{"controller_epoch":3,"leader":0,"version":1,"leader_epoch":5,"isr":[0,1]}',
    "config_entity": b'{"version":1,"config":{"retention.ms":"1000","cleanup.policy":"compact"}}',
    "config_change": b'{"version":2,"entity_path":"topics/demo"}',
    "isr_change": b'{"version":1,"partitions":[{"topic":"demo","partition":0}]}',
    "log_dir_event": b'{"version":1,"broker":0,"event":1}',
    "reassign_partitions": b'{"version":1,"partitions":[{"topic":"demo","partition":0,"replicas":[1,2]}]}',
    "preferred_replica_election": b'{"version":1,"partitions":[{"topic":"demo","partition":0}]}',
    "consumer_offset": b"42",
    "literal_acl_change": b"Topic:demo",
    "extended_acl_change": b'{"version":1,"resourceType":"Topic","name":"demo","patternType":"PREFIXED"}',
    "acls": b'{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read",'
            b'"host":"*"}]}',
    "cluster_id": b'{"version":"1","id":"fuzz-cluster-id"}',
    "producer_id_block": b'{"version":1,"broker":0,"block_start":"1000","block_end":"1999"}',
    "feature": b'{"features":{},"version":1,"status":1}',
}


def seeds() -> Iterable[tuple[str, bytes]]:
    for name, data in _SEEDS.items():
        yield name, bytes([_INDEX[name]]) + data
