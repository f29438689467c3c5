"""Port of raft/src/main/java/org/apache/kafka/raft/LogAppendInfo.java (Kafka 2.8.2).

The first and last offsets an append to the replicated log was given.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LogAppendInfo:
    first_offset: int
    last_offset: int
