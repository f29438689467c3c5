"""Port of clients/src/main/java/org/apache/kafka/common/record/ControlRecordUtils.java
(Kafka 2.8.2), with the LeaderChangeMessage of
clients/src/main/resources/common/message/LeaderChangeMessage.json and
MemoryRecords.withLeaderChangeMessage, and Kafka 3.0.0's snapshot header and footer
(SnapshotHeaderRecord.json, SnapshotFooterRecord.json).

A new leader's first write is a control batch holding one LEADER_CHANGE record: its value
is the LeaderChangeMessage (the leader, the voters, the voters that granted it), version 0,
flexible::

    int32 LeaderId
    compact array of Voter {int32 VoterId, tagged fields}      Voters
    compact array of Voter {int32 VoterId, tagged fields}      GrantingVoters
    tagged fields

It is written here by hand because kio's ``leader_change_message.v0`` is a later Kafka's
version 0, which starts with an int16 ``Version`` field 2.8.2's does not have: its bytes
would not read in Kafka 2.8.2, nor 2.8.2's in it.
"""
from __future__ import annotations

import logging
import struct
from dataclasses import dataclass

from kafka_py.clients.common.record.control_record_type import ControlRecordType
from kafka_py.clients.common.record.default_record_batch import Record, SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.record.memory_records_builder import MemoryRecordsBuilder

logger = logging.getLogger(__name__)

LEADER_CHANGE_SCHEMA_VERSION = 0

_INT32 = struct.Struct(">i")


@dataclass(frozen=True)
class LeaderChangeMessage:
    leader_id: int
    voters: tuple[int, ...]
    granting_voters: tuple[int, ...]

    def serialize(self) -> bytes:
        out = bytearray(_INT32.pack(self.leader_id))
        for voters in (self.voters, self.granting_voters):
            _write_uvarint(out, len(voters) + 1)
            for voter_id in voters:
                out += _INT32.pack(voter_id)
                out.append(0)  # the Voter struct's (empty) tagged fields
        out.append(0)  # the message's (empty) tagged fields
        return bytes(out)

    @classmethod
    def deserialize(cls, data: bytes | memoryview) -> "LeaderChangeMessage":
        view = memoryview(data)
        pos = 0

        def need(n: int) -> None:
            if pos + n > len(view):
                raise ValueError("LeaderChangeMessage is truncated")

        need(4)
        (leader_id,) = _INT32.unpack_from(view, pos)
        pos += 4
        lists = []
        for _ in range(2):
            length, pos = _read_uvarint(view, pos)
            if length == 0:
                raise ValueError("LeaderChangeMessage has a null voter array, which version 0 does not allow")
            voters = []
            for _ in range(length - 1):
                need(4)
                voters.append(_INT32.unpack_from(view, pos)[0])
                pos += 4
                pos = _skip_tagged_fields(view, pos)
            lists.append(tuple(voters))
        pos = _skip_tagged_fields(view, pos)
        return cls(leader_id, lists[0], lists[1])


def _write_uvarint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_uvarint(view: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    for _ in range(5):
        if pos >= len(view):
            raise ValueError("LeaderChangeMessage is truncated")
        b = view[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
    raise ValueError("Varint is too long in LeaderChangeMessage")


def _skip_tagged_fields(view: memoryview, pos: int) -> int:
    count, pos = _read_uvarint(view, pos)
    for _ in range(count):
        _tag, pos = _read_uvarint(view, pos)
        size, pos = _read_uvarint(view, pos)
        if pos + size > len(view):
            raise ValueError("LeaderChangeMessage is truncated")
        pos += size
    return pos


def deserialize_leader_change_message(record: Record) -> LeaderChangeMessage:
    record_type = ControlRecordType.parse(record.key)
    if record_type is not ControlRecordType.LEADER_CHANGE:
        raise ValueError(f"Expected LEADER_CHANGE control record type(3), but found {record_type.name}")
    if record.value is None:
        raise ValueError("LEADER_CHANGE control record has no value")
    return LeaderChangeMessage.deserialize(record.value)


def with_leader_change_message(initial_offset: int, timestamp: int, leader_epoch: int,
                               message: LeaderChangeMessage) -> MemoryRecords:
    """One control batch at ``initial_offset`` holding the LEADER_CHANGE record."""
    builder = MemoryRecordsBuilder(base_offset=initial_offset, is_control_batch=True,
                                   partition_leader_epoch=leader_epoch)
    builder.append_control_record(timestamp, ControlRecordType.LEADER_CHANGE, message.serialize())
    return builder.build()


# ---- KIP-630's snapshot control records (Kafka 3.0.0) ------------------------------------------
# Kafka 3.0 numbers the raft control records LEADER_CHANGE 2, SNAPSHOT_HEADER 3, SNAPSHOT_FOOTER 4;
# this port's log keeps 2.8.2's numbering (LEADER_CHANGE 3), which a snapshot file never holds. A
# snapshot's header and footer are written with 3.0's type ids, so the file reads in Kafka 3.0's
# tools, and are recognised by their place in the file (first and last batch), not by the enum.
SNAPSHOT_HEADER_TYPE = 3
SNAPSHOT_FOOTER_TYPE = 4
SNAPSHOT_HEADER_HIGHEST_VERSION = 0
SNAPSHOT_FOOTER_HIGHEST_VERSION = 0

_CONTROL_KEY = struct.Struct(">hh")
_HEADER_VALUE = struct.Struct(">hq")
_FOOTER_VALUE = struct.Struct(">h")


@dataclass(frozen=True)
class SnapshotHeaderRecord:
    """SnapshotHeaderRecord.json v0 (flexible): int16 Version, int64 LastContainedLogTimestamp."""
    version: int
    last_contained_log_timestamp: int

    def serialize(self) -> bytes:
        return _HEADER_VALUE.pack(self.version, self.last_contained_log_timestamp) + b"\x00"

    @classmethod
    def deserialize(cls, data: bytes | memoryview) -> "SnapshotHeaderRecord":
        view = memoryview(data)
        if len(view) < _HEADER_VALUE.size + 1:
            raise ValueError("SnapshotHeaderRecord is truncated")
        version, timestamp = _HEADER_VALUE.unpack_from(view, 0)
        _skip_tagged_fields(view, _HEADER_VALUE.size)
        return cls(version, timestamp)


@dataclass(frozen=True)
class SnapshotFooterRecord:
    """SnapshotFooterRecord.json v0 (flexible): int16 Version."""
    version: int

    def serialize(self) -> bytes:
        return _FOOTER_VALUE.pack(self.version) + b"\x00"

    @classmethod
    def deserialize(cls, data: bytes | memoryview) -> "SnapshotFooterRecord":
        view = memoryview(data)
        if len(view) < _FOOTER_VALUE.size + 1:
            raise ValueError("SnapshotFooterRecord is truncated")
        (version,) = _FOOTER_VALUE.unpack_from(view, 0)
        _skip_tagged_fields(view, _FOOTER_VALUE.size)
        return cls(version)


def control_record_type_id(record: Record) -> int:
    """The type id in a control record's key (``int16 version, int16 type``)."""
    if record.key is None or len(record.key) < _CONTROL_KEY.size:
        raise ValueError("Control record key is missing or truncated")
    return _CONTROL_KEY.unpack_from(record.key, 0)[1]


def deserialized_snapshot_header_record(record: Record) -> SnapshotHeaderRecord:
    type_id = control_record_type_id(record)
    if type_id != SNAPSHOT_HEADER_TYPE:
        raise ValueError(f"Expected SNAPSHOT_HEADER control record type({SNAPSHOT_HEADER_TYPE}), but found {type_id}")
    if record.value is None:
        raise ValueError("SNAPSHOT_HEADER control record has no value")
    return SnapshotHeaderRecord.deserialize(record.value)


def deserialized_snapshot_footer_record(record: Record) -> SnapshotFooterRecord:
    type_id = control_record_type_id(record)
    if type_id != SNAPSHOT_FOOTER_TYPE:
        raise ValueError(f"Expected SNAPSHOT_FOOTER control record type({SNAPSHOT_FOOTER_TYPE}), but found {type_id}")
    if record.value is None:
        raise ValueError("SNAPSHOT_FOOTER control record has no value")
    return SnapshotFooterRecord.deserialize(record.value)


def snapshot_control_batch(base_offset: int, timestamp: int, epoch: int, type_id: int, value: bytes) -> MemoryRecords:
    """One control batch at ``base_offset`` holding a single snapshot control record."""
    key = _CONTROL_KEY.pack(0, type_id)
    return MemoryRecords(bytearray(build_batch([SimpleRecord(key, value, timestamp)], base_offset=base_offset,
                                               is_control_batch=True, partition_leader_epoch=epoch)))
