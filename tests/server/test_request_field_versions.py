"""The versions KafkaApis and its handler modules (server/kafka_apis*.py) read request fields
from, checked against the message classes the broker parses requests with.

The handlers read a field that older versions lack behind a version check, as Kafka's
KafkaApis does (``body.transactional_id if version >= 3 else None``), and read a field with
no check where every served version has it. Each row here is one such read: the field must
exist in exactly the served versions the handler reads it in, or a request of some version
would either fail with AttributeError or lose what its client sent.
"""
from __future__ import annotations

import dataclasses
import typing

import pytest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.messages import request_schema

# (api, path to the struct holding the field, field, first version read, last version read);
# None as the last: up to the newest version served
READS = [
    ("PRODUCE", (), "acks", 0, None),
    ("PRODUCE", (), "transactional_id", 3, None),
    ("FETCH", (), "replica_id", 0, None),
    ("FETCH", (), "max_bytes", 3, None),
    ("FETCH", (), "isolation_level", 4, None),
    ("FETCH", (), "session_id", 7, None),
    ("FETCH", (), "session_epoch", 7, None),
    ("FETCH", (), "forgotten_topics_data", 7, None),
    ("FETCH", (), "rack_id", 11, None),
    ("FETCH", ("topics", "partitions"), "log_start_offset", 5, None),
    ("FETCH", ("topics", "partitions"), "current_leader_epoch", 9, None),
    ("FETCH", ("topics", "partitions"), "last_fetched_epoch", 12, None),
    ("METADATA", ("topics",), "topic_id", 10, None),
    ("METADATA", (), "allow_auto_topic_creation", 4, None),
    ("METADATA", (), "include_cluster_authorized_operations", 8, 10),
    ("METADATA", (), "include_topic_authorized_operations", 8, None),
    ("LIST_OFFSETS", (), "isolation_level", 2, None),
    ("LIST_OFFSETS", ("topics", "partitions"), "current_leader_epoch", 4, None),
    ("OFFSET_FOR_LEADER_EPOCH", ("topics", "partitions"), "current_leader_epoch", 2, None),
    ("INIT_PRODUCER_ID", (), "producer_id", 3, None),
    ("INIT_PRODUCER_ID", (), "producer_epoch", 3, None),
    ("DESCRIBE_CLUSTER", (), "include_cluster_authorized_operations", 0, None),
    ("LEADER_AND_ISR", (), "broker_epoch", 2, None),
    ("STOP_REPLICA", (), "broker_epoch", 1, None),
    ("UPDATE_METADATA", (), "broker_epoch", 5, None),
    ("CONTROLLED_SHUTDOWN", (), "broker_epoch", 2, None),
    ("FIND_COORDINATOR", (), "key_type", 1, None),
    ("JOIN_GROUP", (), "rebalance_timeout", 1, None),
    ("JOIN_GROUP", (), "group_instance_id", 5, None),
    ("SYNC_GROUP", (), "group_instance_id", 3, None),
    ("SYNC_GROUP", (), "protocol_type", 5, None),
    ("SYNC_GROUP", (), "protocol_name", 5, None),
    ("HEARTBEAT", (), "group_instance_id", 3, None),
    ("LEAVE_GROUP", ("members",), "group_instance_id", 3, None),
    ("OFFSET_COMMIT", (), "generation_id_or_member_epoch", 1, None),
    ("OFFSET_COMMIT", (), "retention_time", 2, 4),
    ("OFFSET_COMMIT", (), "group_instance_id", 7, None),
    ("OFFSET_COMMIT", ("topics", "partitions"), "commit_timestamp", 1, 1),
    ("OFFSET_COMMIT", ("topics", "partitions"), "committed_leader_epoch", 6, None),
    ("OFFSET_FETCH", (), "require_stable", 7, None),
    ("DESCRIBE_GROUPS", (), "include_authorized_operations", 3, None),
    ("LIST_GROUPS", (), "states_filter", 4, None),
    ("TXN_OFFSET_COMMIT", ("topics", "partitions"), "committed_leader_epoch", 2, None),
    ("TXN_OFFSET_COMMIT", (), "member_id", 3, None),
    ("TXN_OFFSET_COMMIT", (), "group_instance_id", 3, None),
    ("TXN_OFFSET_COMMIT", (), "generation_id", 3, None),
    ("ADD_PARTITIONS_TO_TXN", (), "v3_and_below_topics", 0, None),
    ("CREATE_TOPICS", (), "validate_only", 1, None),
    ("DELETE_TOPICS", (), "topic_names", 0, 5),
    ("DELETE_TOPICS", (), "topics", 6, None),
    ("DESCRIBE_CONFIGS", (), "include_synonyms", 1, None),
    ("DESCRIBE_CONFIGS", (), "include_documentation", 3, None),
]


def _element_class(cls: type, name: str) -> type:
    """The class of a struct field's elements (a tuple of structs, or a struct)."""
    hint = typing.get_type_hints(cls)[name]
    while typing.get_args(hint):
        hint = next(a for a in typing.get_args(hint) if a is not type(None) and a is not Ellipsis)
    return hint


def _has_field(api: ApiKeys, version: int, path: tuple[str, ...], name: str) -> bool:
    cls = request_schema(api.id, version)
    for step in path:
        if step not in {f.name for f in dataclasses.fields(cls)}:
            return False  # (LeaveGroup v0-v2 have no members)
        cls = _element_class(cls, step)
    return name in {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("api_name, path, name, first, last", READS,
                         ids=[f"{api}-{'.'.join(path + (name,))}" for api, path, name, _, _ in READS])
def test_a_field_is_in_exactly_the_versions_the_handlers_read_it_in(api_name: str, path: tuple[str, ...],
                                                                     name: str, first: int,
                                                                     last: typing.Optional[int]) -> None:
    api = ApiKeys[api_name]
    served = api.supported_versions()
    last = served[-1] if last is None else last
    present = [v for v in served if _has_field(api, v, path, name)]
    assert present == list(range(first, last + 1))
