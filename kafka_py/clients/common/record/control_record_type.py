"""Port of clients/src/main/java/org/apache/kafka/common/record/ControlRecordType.java
and EndTransactionMarker.java.

A control batch holds one control record whose key is ``int16 version, int16
type`` and, for transaction markers, whose value is ``int16 version, int32
coordinatorEpoch``.
"""
from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Optional

from kafka_py.clients.common.errors import InvalidRecordException

logger = logging.getLogger(__name__)

CURRENT_CONTROL_RECORD_KEY_VERSION = 0
CONTROL_RECORD_KEY_SIZE = 4
CURRENT_END_TXN_MARKER_VERSION = 0
END_TXN_MARKER_VALUE_SIZE = 6

_KEY = struct.Struct(">hh")
_TXN_VALUE = struct.Struct(">hi")


class ControlRecordType(IntEnum):
    ABORT = 0
    COMMIT = 1
    # Raft-only types of 2.8 (KIP-595); a ZooKeeper broker never writes them.
    QUORUM_REASSIGNMENT = 2
    LEADER_CHANGE = 3
    UNKNOWN = -1

    def record_key(self) -> bytes:
        if self is ControlRecordType.UNKNOWN:
            raise ValueError("Cannot serialize UNKNOWN control record type")
        return _KEY.pack(CURRENT_CONTROL_RECORD_KEY_VERSION, int(self))

    @classmethod
    def from_type_id(cls, type_id: int) -> "ControlRecordType":
        try:
            return cls(type_id)
        except ValueError:
            return cls.UNKNOWN

    @classmethod
    def parse(cls, key: Optional[bytes]) -> "ControlRecordType":
        if key is None or len(key) < CONTROL_RECORD_KEY_SIZE:
            raise InvalidRecordException(
                f"Invalid control record key size {0 if key is None else len(key)}, "
                f"expected at least {CONTROL_RECORD_KEY_SIZE}"
            )
        version, type_id = _KEY.unpack_from(key, 0)
        if version < 0:
            raise InvalidRecordException(f"Invalid version found for control record: {version}")
        if version > CURRENT_CONTROL_RECORD_KEY_VERSION:
            logger.debug("Received unknown control record key version %d; parsing as version %d",
                         version, CURRENT_CONTROL_RECORD_KEY_VERSION)
        return cls.from_type_id(type_id)


@dataclass(frozen=True, slots=True)
class EndTransactionMarker:
    """The COMMIT or ABORT marker a transaction coordinator writes to each partition."""

    control_type: ControlRecordType
    coordinator_epoch: int

    def __post_init__(self) -> None:
        if self.control_type not in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
            raise ValueError(f"Invalid control type for end transaction marker: {self.control_type}")

    def record_key(self) -> bytes:
        return self.control_type.record_key()

    def serialize_value(self) -> bytes:
        return _TXN_VALUE.pack(CURRENT_END_TXN_MARKER_VERSION, self.coordinator_epoch)

    @classmethod
    def deserialize(cls, record) -> "EndTransactionMarker":
        """Read the marker from a control record (anything with ``key`` and ``value``)."""
        control_type = ControlRecordType.parse(record.key)
        return cls.deserialize_value(control_type, record.value)

    @classmethod
    def deserialize_value(cls, control_type: ControlRecordType, value: Optional[bytes]) -> "EndTransactionMarker":
        if value is None or len(value) < 2:
            raise InvalidRecordException("Invalid end transaction marker: value too short")
        (version,) = struct.unpack_from(">h", value, 0)
        if version < 0:
            raise InvalidRecordException(f"Invalid version found for end transaction marker: {version}")
        if version > CURRENT_END_TXN_MARKER_VERSION:
            logger.debug("Received end transaction marker value version %d; parsing as version %d",
                         version, CURRENT_END_TXN_MARKER_VERSION)
        if len(value) < END_TXN_MARKER_VALUE_SIZE:
            raise InvalidRecordException(f"Invalid end transaction marker value size {len(value)}")
        (_, coordinator_epoch) = _TXN_VALUE.unpack_from(value, 0)
        return cls(control_type, coordinator_epoch)
