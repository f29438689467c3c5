"""Port of raft/src/main/java/org/apache/kafka/raft/LogFetchInfo.java (Kafka 2.8.2).

What a read of the replicated log returns: the batches and the offset metadata of the
position the read started at (the leader uses the latter to track a follower's progress).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.clients.common.record.memory_records import MemoryRecords

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LogFetchInfo:
    records: MemoryRecords
    start_offset_metadata: LogOffsetMetadata
