"""Port of core/src/main/resources/common/message/OffsetCommitKey.json, OffsetCommitValue.json,
GroupMetadataKey.json and GroupMetadataValue.json (Kafka 2.8.2), the record schemas of
__consumer_offsets, and of MessageUtil.toVersionPrefixedBytes.

Kafka generates Java classes from those specs; these are the same four messages as frozen
dataclasses with a writer and a reader per version. None of the versions is flexible, so the
encoding is the classic one: int16-length UTF-8 strings (-1 for a null nullable string),
int32-length byte arrays, big-endian ints, int32-counted arrays. A record key or value in
__consumer_offsets is an int16 schema version followed by the message in that version:

=========================  ==============================================================
key version 0, 1           OffsetCommitKey: group, topic, partition
key version 2              GroupMetadataKey: group
OffsetCommitValue v0       offset, metadata, commit_timestamp
OffsetCommitValue v1       offset, metadata, commit_timestamp, expire_timestamp
OffsetCommitValue v2       offset, metadata, commit_timestamp
OffsetCommitValue v3       offset, leader_epoch, metadata, commit_timestamp
GroupMetadataValue v0      protocol_type, generation, protocol?, leader?, members
                           (member_id, client_id, client_host, session_timeout,
                           subscription, assignment)
GroupMetadataValue v1      members gain rebalance_timeout (before session_timeout)
GroupMetadataValue v2      current_state_timestamp after leader
GroupMetadataValue v3      members gain group_instance_id? after member_id
=========================  ==============================================================

Readers take any buffer (bytes, memoryview) and ignore bytes after the message, as Kafka's
generated readers do; a truncated or malformed message raises ``SchemaException``.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Optional, Protocol

from kafka_py.clients.common.protocol.codec import SchemaException

_INT8 = struct.Struct(">b")
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_MAX_STRING_BYTES = 0x7FFF


class Writable:
    """Kafka's protocol Writable (as ByteBufferAccessor implements it) for the schemas'
    fixed-width fields: each write appends, ``getvalue`` joins them."""

    __slots__ = ("_parts",)

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def int8(self, v: int) -> None:
        self._parts.append(_INT8.pack(v))

    def int16(self, v: int) -> None:
        self._parts.append(_INT16.pack(v))

    def int32(self, v: int) -> None:
        self._parts.append(_INT32.pack(v))

    def int64(self, v: int) -> None:
        self._parts.append(_INT64.pack(v))

    def string(self, v: Optional[str], name: str, nullable: bool = False) -> None:
        if v is None:
            if not nullable:
                raise ValueError(f"Non-nullable field {name} was set to null")
            self._parts.append(_INT16.pack(-1))
            return
        data = v.encode("utf-8")
        if len(data) > _MAX_STRING_BYTES:
            raise ValueError(f"'{name}' field is too long to be serialized")
        self._parts.append(_INT16.pack(len(data)))
        self._parts.append(data)

    def bytes_(self, v: bytes) -> None:
        self._parts.append(_INT32.pack(len(v)))
        self._parts.append(bytes(v))

    def getvalue(self) -> bytes:
        return b"".join(self._parts)


class Readable:
    """Kafka's protocol Readable (as ByteBufferAccessor implements it) over a buffer;
    reading past the end, a null where none is allowed or bad UTF-8 raise SchemaException."""

    __slots__ = ("_buf", "_pos")

    def __init__(self, buffer, position: int = 0) -> None:
        self._buf = memoryview(buffer).cast("B") if not isinstance(buffer, (bytes, bytearray)) else buffer
        self._pos = position

    def _take(self, n: int) -> bytes:
        end = self._pos + n
        if n < 0 or end > len(self._buf):
            raise SchemaException(f"Error reading {n} bytes at position {self._pos}: buffer has {len(self._buf)}")
        data = bytes(self._buf[self._pos:end])
        self._pos = end
        return data

    def int8(self) -> int:
        return _INT8.unpack(self._take(1))[0]

    def int16(self) -> int:
        return _INT16.unpack(self._take(2))[0]

    def int32(self) -> int:
        return _INT32.unpack(self._take(4))[0]

    def int64(self) -> int:
        return _INT64.unpack(self._take(8))[0]

    def string(self, name: str, nullable: bool = False) -> Optional[str]:
        length = self.int16()
        if length < 0:
            if nullable:
                return None
            raise SchemaException(f"non-nullable field {name} was serialized as null")
        try:
            return self._take(length).decode("utf-8")
        except UnicodeDecodeError as e:
            raise SchemaException(f"field {name} is not valid UTF-8: {e}") from e

    def bytes_(self, name: str) -> bytes:
        length = self.int32()
        if length < 0:
            raise SchemaException(f"non-nullable field {name} was serialized as null")
        return self._take(length)

    def array_length(self, name: str, nullable: bool = False) -> int:
        """The element count of an array; -1 for a null ``nullable`` array."""
        n = self.int32()
        if n < 0:
            if nullable:
                return -1
            raise SchemaException(f"non-nullable field {name} was serialized as null")
        # every element takes at least one byte; a bigger count is garbage, not an allocation
        if n > len(self._buf) - self._pos:
            raise SchemaException(f"field {name} claims {n} elements in {len(self._buf) - self._pos} bytes")
        return n

    @property
    def position(self) -> int:
        return self._pos


class _Message(Protocol):
    LOWEST_SUPPORTED_VERSION: int
    HIGHEST_SUPPORTED_VERSION: int

    def write(self, version: int) -> bytes: ...


def _check_version(cls: type, version: int) -> None:
    if not cls.LOWEST_SUPPORTED_VERSION <= version <= cls.HIGHEST_SUPPORTED_VERSION:
        raise SchemaException(f"Can't read version {version} of {cls.__name__}")


# ---------------------------------------------------------------------------- keys


@dataclass(frozen=True)
class OffsetCommitKey:
    """Key of a committed offset (versions 0 and 1 have the same layout)."""

    LOWEST_SUPPORTED_VERSION = 0
    HIGHEST_SUPPORTED_VERSION = 1

    group: str
    topic: str
    partition: int

    def write(self, version: int) -> bytes:
        _check_version(type(self), version)
        w = Writable()
        w.string(self.group, "group")
        w.string(self.topic, "topic")
        w.int32(self.partition)
        return w.getvalue()

    @classmethod
    def read(cls, reader: Readable, version: int) -> "OffsetCommitKey":
        _check_version(cls, version)
        return cls(reader.string("group"), reader.string("topic"), reader.int32())


@dataclass(frozen=True)
class GroupMetadataKey:
    """Key of a group's metadata (version 2 only)."""

    LOWEST_SUPPORTED_VERSION = 2
    HIGHEST_SUPPORTED_VERSION = 2

    group: str

    def write(self, version: int) -> bytes:
        _check_version(type(self), version)
        w = Writable()
        w.string(self.group, "group")
        return w.getvalue()

    @classmethod
    def read(cls, reader: Readable, version: int) -> "GroupMetadataKey":
        _check_version(cls, version)
        return cls(reader.string("group"))


# ---------------------------------------------------------------------------- values


@dataclass(frozen=True)
class OffsetCommitValue:
    """A committed offset. ``leader_epoch`` exists from v3, ``expire_timestamp`` only in v1;
    fields a version lacks are written as nothing and read as their defaults (-1)."""

    LOWEST_SUPPORTED_VERSION = 0
    HIGHEST_SUPPORTED_VERSION = 3

    offset: int
    metadata: str
    commit_timestamp: int
    leader_epoch: int = -1
    expire_timestamp: int = -1

    def write(self, version: int) -> bytes:
        _check_version(type(self), version)
        w = Writable()
        w.int64(self.offset)
        if version >= 3:
            w.int32(self.leader_epoch)
        w.string(self.metadata, "metadata")
        w.int64(self.commit_timestamp)
        if version == 1:
            w.int64(self.expire_timestamp)
        return w.getvalue()

    @classmethod
    def read(cls, reader: Readable, version: int) -> "OffsetCommitValue":
        _check_version(cls, version)
        offset = reader.int64()
        leader_epoch = reader.int32() if version >= 3 else -1
        metadata = reader.string("metadata")
        commit_timestamp = reader.int64()
        expire_timestamp = reader.int64() if version == 1 else -1
        return cls(offset, metadata, commit_timestamp, leader_epoch, expire_timestamp)


@dataclass(frozen=True)
class MemberMetadataValue:
    """One member inside a GroupMetadataValue (GroupMetadataValue.MemberMetadata in Kafka)."""

    member_id: str
    client_id: str
    client_host: str
    session_timeout: int
    subscription: bytes
    assignment: bytes
    rebalance_timeout: int = 0
    group_instance_id: Optional[str] = None

    def _write(self, w: Writable, version: int) -> None:
        w.string(self.member_id, "memberId")
        if version >= 3:
            w.string(self.group_instance_id, "groupInstanceId", nullable=True)
        w.string(self.client_id, "clientId")
        w.string(self.client_host, "clientHost")
        if version >= 1:
            w.int32(self.rebalance_timeout)
        w.int32(self.session_timeout)
        w.bytes_(self.subscription)
        w.bytes_(self.assignment)

    @classmethod
    def _read(cls, r: Readable, version: int) -> "MemberMetadataValue":
        member_id = r.string("memberId")
        group_instance_id = r.string("groupInstanceId", nullable=True) if version >= 3 else None
        client_id = r.string("clientId")
        client_host = r.string("clientHost")
        rebalance_timeout = r.int32() if version >= 1 else 0
        session_timeout = r.int32()
        subscription = r.bytes_("subscription")
        assignment = r.bytes_("assignment")
        return cls(member_id, client_id, client_host, session_timeout, subscription, assignment,
                   rebalance_timeout, group_instance_id)


@dataclass(frozen=True)
class GroupMetadataValue:
    """A group's generation, protocol, leader and members (with their assignments)."""

    LOWEST_SUPPORTED_VERSION = 0
    HIGHEST_SUPPORTED_VERSION = 3

    protocol_type: str
    generation: int
    protocol: Optional[str]
    leader: Optional[str]
    members: tuple[MemberMetadataValue, ...] = field(default_factory=tuple)
    current_state_timestamp: int = -1

    def write(self, version: int) -> bytes:
        _check_version(type(self), version)
        w = Writable()
        w.string(self.protocol_type, "protocolType")
        w.int32(self.generation)
        w.string(self.protocol, "protocol", nullable=True)
        w.string(self.leader, "leader", nullable=True)
        if version >= 2:
            w.int64(self.current_state_timestamp)
        w.int32(len(self.members))
        for member in self.members:
            member._write(w, version)
        return w.getvalue()

    @classmethod
    def read(cls, reader: Readable, version: int) -> "GroupMetadataValue":
        _check_version(cls, version)
        protocol_type = reader.string("protocolType")
        generation = reader.int32()
        protocol = reader.string("protocol", nullable=True)
        leader = reader.string("leader", nullable=True)
        current_state_timestamp = reader.int64() if version >= 2 else -1
        count = reader.array_length("members")
        members = tuple(MemberMetadataValue._read(reader, version) for _ in range(count))
        return cls(protocol_type, generation, protocol, leader, members, current_state_timestamp)


# ---------------------------------------------------------------------------- version prefix


def to_version_prefixed_bytes(version: int, message: _Message) -> bytes:
    """MessageUtil.toVersionPrefixedBytes: the int16 version, then the message in that version."""
    return _INT16.pack(version) + message.write(version)


def read_version(buffer) -> tuple[int, Readable]:
    """The int16 schema version at the start of ``buffer`` and a reader positioned after it."""
    reader = Readable(buffer)
    return reader.int16(), reader


__all__ = [
    "GroupMetadataKey",
    "GroupMetadataValue",
    "MemberMetadataValue",
    "OffsetCommitKey",
    "OffsetCommitValue",
    "Readable",
    "Writable",
    "read_version",
    "to_version_prefixed_bytes",
]
