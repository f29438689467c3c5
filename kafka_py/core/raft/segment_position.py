"""Port of core/src/main/scala/kafka/raft/SegmentPosition.scala (Kafka 2.8.2).

The offset metadata KafkaMetadataLog hands the raft client with an offset: the base offset
of the segment that holds it and the byte position inside that segment. The client passes it
back with the high watermark, so the log can bound a committed read without an index lookup.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from kafka_py.raft.log_offset_metadata import OffsetMetadata

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SegmentPosition(OffsetMetadata):
    base_offset: int
    relative_position: int

    def __str__(self) -> str:
        return f"SegmentPosition(baseOffset={self.base_offset}, relativePosition={self.relative_position})"
