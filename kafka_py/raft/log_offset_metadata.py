"""Port of raft/src/main/java/org/apache/kafka/raft/LogOffsetMetadata.java and
OffsetMetadata.java (Kafka 2.8.2).

An offset with optional opaque metadata that only the log implementation understands
(for a segmented log: the segment and position, which spares an index lookup when the
high watermark is used to bound a committed read).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional

logger = logging.getLogger(__name__)


class OffsetMetadata:
    """Marker base of a log implementation's opaque position metadata."""


@dataclass(frozen=True, slots=True)
class LogOffsetMetadata:
    offset: int
    metadata: Optional[OffsetMetadata] = None

    def __str__(self) -> str:
        return f"LogOffsetMetadata(offset={self.offset}, metadata={self.metadata})"
