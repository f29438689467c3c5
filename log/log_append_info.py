"""Port of the value types at the top of core/src/main/scala/kafka/log/Log.scala.

LogAppendInfo, LogOffsetSnapshot, LogReadInfo, RollParams, LeaderHwChange and the
reasons for log start offset increments and segment deletions. Kept apart from
``log.py`` so that the broker layers can import them without the Log machinery.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Optional

from kafka_py.log.log_offset_metadata import FetchDataInfo, LogOffsetMetadata
from kafka_py.clients.common.protocol.requests import EpochEndOffset
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import NO_TIMESTAMP
from kafka_py.clients.common.record.record_conversion_stats import RecordConversionStats

if TYPE_CHECKING:
    # the validator makes LogAppendInfos: this module is below it
    from kafka_py.log.log_validator import RecordError


class LeaderHwChange(enum.Enum):
    INCREASED = "Increased"
    SAME = "Same"
    NONE = "None"


@dataclass(slots=True)
class LogAppendInfo:
    """What an append learned about the records it was given and where they went.

    Mutable on purpose, as Kafka's: the append path fills in offsets after the
    records have been validated and assigned.
    """

    first_offset: Optional[LogOffsetMetadata]
    last_offset: int
    last_leader_epoch: Optional[int]
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int
    log_start_offset: int
    record_conversion_stats: Optional[RecordConversionStats]
    source_codec: Optional[CompressionType]
    target_codec: Optional[CompressionType]
    shallow_count: int
    valid_bytes: int
    offsets_monotonic: bool
    last_offset_of_first_batch: int
    record_errors: list[RecordError] = field(default_factory=list)
    error_message: Optional[str] = None
    leader_hw_change: LeaderHwChange = LeaderHwChange.NONE

    @property
    def first_or_last_offset_of_first_batch(self) -> int:
        if self.first_offset is not None:
            return self.first_offset.message_offset
        return self.last_offset_of_first_batch

    @property
    def num_messages(self) -> int:
        fo = self.first_offset
        if fo is not None and fo.message_offset >= 0 and self.last_offset >= 0:
            return self.last_offset - fo.message_offset + 1
        return 0

    @classmethod
    def unknown(cls, log_start_offset: int = -1, record_errors: Optional[list[RecordError]] = None,
                error_message: Optional[str] = None) -> "LogAppendInfo":
        """Kafka's UnknownLogAppendInfo / unknownLogAppendInfoWith*: an append that failed."""
        return cls(None, -1, None, NO_TIMESTAMP, -1, NO_TIMESTAMP, log_start_offset, None,
                   None, None, -1, -1, False, -1, list(record_errors or ()), error_message)


UNKNOWN_LOG_APPEND_INFO = LogAppendInfo.unknown()


@dataclass(frozen=True, slots=True)
class LogOffsetSnapshot:
    """The significant offsets of a partition taken together, so they agree with each other."""

    log_start_offset: int
    log_end_offset: LogOffsetMetadata
    high_watermark: LogOffsetMetadata
    last_stable_offset: LogOffsetMetadata


@dataclass(frozen=True, slots=True)
class LogReadInfo:
    fetched_data: FetchDataInfo
    diverging_epoch: Optional[EpochEndOffset]
    high_watermark: int
    log_start_offset: int
    log_end_offset: int
    last_stable_offset: int


class RollParams(NamedTuple):
    """Everything LogSegment.should_roll needs to decide, gathered by the Log.

    A NamedTuple rather than a frozen dataclass: one is built per append.
    """

    max_segment_ms: int
    max_segment_bytes: int
    max_timestamp_in_messages: int
    max_offset_in_messages: int
    messages_size: int
    now: int


class LogStartOffsetIncrementReason(enum.Enum):
    CLIENT_RECORD_DELETION = "client delete records request"
    LEADER_OFFSET_INCREMENTED = "leader offset increment"
    SEGMENT_DELETION = "segment deletion"
    SNAPSHOT_GENERATED = "snapshot generated"

    def __str__(self) -> str:
        return self.value


class SegmentDeletionReason(enum.Enum):
    RETENTION_MS_BREACH = "retention time breach"
    RETENTION_SIZE_BREACH = "retention size breach"
    START_OFFSET_BREACH = "log start offset breach"
    LOG_RECOVERY = "log recovery"
    LOG_TRUNCATION = "log truncation"
    LOG_ROLL = "log roll"
    LOG_DELETION = "log deletion"

    def __str__(self) -> str:
        return self.value
