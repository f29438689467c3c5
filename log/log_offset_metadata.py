"""Port of core/src/main/scala/kafka/server/LogOffsetMetadata.scala and FetchDataInfo.scala.

Kafka keeps these two value types in ``kafka.server`` although only the log
creates them; they live beside the log here so that ``log/`` has no import
cycle with ``server/``. ``kafka_py.log.log`` re-exports them.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

from kafka_py.clients.common.errors import KafkaException
from kafka_py.log.log_files import UNKNOWN_OFFSET
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords

UNKNOWN_FILE_POSITION = -1


@dataclass(frozen=True, slots=True, init=False)
class LogOffsetMetadata:
    """An offset in the log, optionally with the segment and byte position that hold it.

    The position lets a delayed fetch compute how many bytes have accumulated
    between two offsets without an index lookup.
    """

    message_offset: int
    segment_base_offset: int = UNKNOWN_OFFSET
    relative_position_in_segment: int = UNKNOWN_FILE_POSITION

    def __init__(self, message_offset: int, segment_base_offset: int = UNKNOWN_OFFSET,
                 relative_position_in_segment: int = UNKNOWN_FILE_POSITION) -> None:
        # Several are made per append: the fields are written through their slots' setters,
        # where a frozen dataclass's own __init__ calls object.__setattr__ for each.
        _set_message_offset(self, message_offset)
        _set_segment_base_offset(self, segment_base_offset)
        _set_relative_position_in_segment(self, relative_position_in_segment)

    @property
    def message_offset_only(self) -> bool:
        return (
            self.segment_base_offset == UNKNOWN_OFFSET
            and self.relative_position_in_segment == UNKNOWN_FILE_POSITION
        )

    def on_older_segment(self, that: "LogOffsetMetadata") -> bool:
        if self.message_offset_only:
            raise KafkaException(f"{self} cannot compare its segment info with {that} since it only has message offset info")
        return self.segment_base_offset < that.segment_base_offset

    def on_same_segment(self, that: "LogOffsetMetadata") -> bool:
        if self.message_offset_only:
            raise KafkaException(f"{self} cannot compare its segment info with {that} since it only has message offset info")
        return self.segment_base_offset == that.segment_base_offset

    def offset_diff(self, that: "LogOffsetMetadata") -> int:
        return self.message_offset - that.message_offset

    def position_diff(self, that: "LogOffsetMetadata") -> int:
        if not self.on_same_segment(that):
            raise KafkaException(f"{self} cannot compare its segment position with {that} since they are not on the same segment")
        if self.message_offset_only:
            raise KafkaException(f"{self} cannot compare its segment position with {that} since it only has message offset info")
        return self.relative_position_in_segment - that.relative_position_in_segment

    def __str__(self) -> str:
        return f"(offset={self.message_offset} segment=[{self.segment_base_offset}:{self.relative_position_in_segment}])"


_set_message_offset = LogOffsetMetadata.__dict__["message_offset"].__set__
_set_segment_base_offset = LogOffsetMetadata.__dict__["segment_base_offset"].__set__
_set_relative_position_in_segment = LogOffsetMetadata.__dict__["relative_position_in_segment"].__set__


UNKNOWN_OFFSET_METADATA = LogOffsetMetadata(-1, 0, 0)


class FetchIsolation(enum.Enum):
    """How far a read may go: log end (followers), high watermark, or last stable offset."""

    LOG_END = "FetchLogEnd"
    HIGH_WATERMARK = "FetchHighWatermark"
    TXN_COMMITTED = "FetchTxnCommitted"


@dataclass(frozen=True, slots=True)
class FetchDataInfo:
    """The result of a log read.

    ``records`` is a ``FileRecords`` slice (bytes stay in the file, to be sent with
    sendfile) or ``MemoryRecords.EMPTY``.
    """

    fetch_offset_metadata: LogOffsetMetadata
    records: FileRecords | MemoryRecords
    first_entry_incomplete: bool = False
    aborted_transactions: Optional[list] = None
