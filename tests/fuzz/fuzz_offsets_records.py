"""Fuzz target: the records of __consumer_offsets as the group coordinator loads them and
kafka-dump-log prints them (kafka_py/core/coordinator/group/group_metadata_manager.py). The first
byte picks what the rest is: a record key, an offset commit value, a group metadata value,
or (a two-byte key length, the key, the value) for the dump tool's formatter.

Contract: each parses, or SchemaException is raised (a record Kafka cannot read either).
"""
from __future__ import annotations

import struct
from typing import Iterable

from kafka_py.core.coordinator.group.group_metadata_manager import (
    format_record_key_and_value,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
)
from kafka_py.clients.common.protocol.codec import SchemaException
from kafka_py.clients.common.utils.time import MockTime

_TIME = MockTime(1_700_000_000_000)


def one_input(data: bytes) -> None:
    if not data:
        return
    kind, rest = data[0] % 4, data[1:]
    try:
        if kind == 0:
            read_message_key(rest)
        elif kind == 1:
            read_offset_message_value(rest)
        elif kind == 2:
            read_group_message_value("fuzz-group", rest, _TIME)
        else:
            (key_length,) = struct.unpack_from(">H", rest) if len(rest) >= 2 else (0,)
            format_record_key_and_value(rest[2:2 + key_length], rest[2 + key_length:])
    except SchemaException:
        pass


def seeds() -> Iterable[tuple[str, bytes]]:
    from kafka_py.clients.common.topic_partition import TopicPartition
    from kafka_py.core.coordinator.group.group_metadata import GroupMetadata, Stable
    from kafka_py.core.coordinator.group.group_metadata_manager import (
        group_metadata_key, group_metadata_value, offset_commit_key, offset_commit_value)
    from kafka_py.core.coordinator.group.member_metadata import MemberMetadata
    from kafka_py.core.coordinator.group.offset_and_metadata import OffsetAndMetadata

    offset_key = offset_commit_key("group-a", TopicPartition("topic", 3))
    group_key = group_metadata_key("group-a")
    yield "offset-key", b"\x00" + offset_key
    yield "group-key", b"\x00" + group_key
    values = {"offset-v3": offset_commit_value(OffsetAndMetadata(42, 5, "meta", 1_700_000_000_000)),
              "offset-v1": offset_commit_value(OffsetAndMetadata(42, None, "", 1, 2), version=1)}
    for version in (0, 2):
        values[f"offset-v{version}"] = offset_commit_value(OffsetAndMetadata(7, None, "m", 1), version=version)
    for name, value in values.items():
        yield name, b"\x01" + value
        yield f"dump-{name}", b"\x03" + struct.pack(">H", len(offset_key)) + offset_key + value
    # A consumer's assignment of topic-0 and topic-1 (ConsumerProtocol v0).
    assignment = (struct.pack(">hi", 0, 1) + struct.pack(">h", 5) + b"topic" + struct.pack(">iii", 2, 0, 1)
                  + struct.pack(">i", -1))
    member = MemberMetadata("member-1", "instance-1", "client", "/127.0.0.1", 30000, 10000, "consumer",
                            [("range", struct.pack(">hi", 0, 1) + struct.pack(">h", 5) + b"topic"
                              + struct.pack(">i", -1))], assignment)
    group = GroupMetadata.load_group("group-a", Stable, 3, "consumer", "range", "member-1", 1_700_000_000_000,
                                     [member], _TIME)
    for version in range(4):
        value = group_metadata_value(group, {"member-1": assignment}, version)
        yield f"group-v{version}", b"\x02" + value
        yield f"dump-group-v{version}", b"\x03" + struct.pack(">H", len(group_key)) + group_key + value
