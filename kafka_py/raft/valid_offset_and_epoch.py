"""Port of raft/src/main/java/org/apache/kafka/raft/ValidOffsetAndEpoch.java (Kafka 3.0.0).

The answer to "is this fetch position (offset, epoch of the record before it) part of my
log?": VALID, or DIVERGING with the largest position both logs can share, which the
fetching follower truncates to; or SNAPSHOT with the id of the latest snapshot, when the
position lies before the log start (KIP-630) and the follower must fetch that snapshot.
"""
from __future__ import annotations

import enum
import logging
from dataclasses import dataclass

from kafka_py.raft.offset_and_epoch import OffsetAndEpoch

logger = logging.getLogger(__name__)


class ValidOffsetAndEpochType(enum.Enum):
    DIVERGING = "DIVERGING"
    SNAPSHOT = "SNAPSHOT"
    VALID = "VALID"


@dataclass(frozen=True, slots=True)
class ValidOffsetAndEpoch:
    type: ValidOffsetAndEpochType
    offset_and_epoch: OffsetAndEpoch

    Type = ValidOffsetAndEpochType

    @staticmethod
    def diverging(offset_and_epoch: OffsetAndEpoch) -> "ValidOffsetAndEpoch":
        return ValidOffsetAndEpoch(ValidOffsetAndEpochType.DIVERGING, offset_and_epoch)

    @staticmethod
    def snapshot(offset_and_epoch: OffsetAndEpoch) -> "ValidOffsetAndEpoch":
        return ValidOffsetAndEpoch(ValidOffsetAndEpochType.SNAPSHOT, offset_and_epoch)

    @staticmethod
    def valid(offset_and_epoch: OffsetAndEpoch = OffsetAndEpoch(-1, -1)) -> "ValidOffsetAndEpoch":
        return ValidOffsetAndEpoch(ValidOffsetAndEpochType.VALID, offset_and_epoch)
