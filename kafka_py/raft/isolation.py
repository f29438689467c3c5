"""Port of raft/src/main/java/org/apache/kafka/raft/Isolation.java (Kafka 2.8.2).

Whether a read of the replicated log stops at the high watermark (COMMITTED) or at the
log end (UNCOMMITTED, what the leader serves to fetching replicas).
"""
from __future__ import annotations

import enum
import logging

logger = logging.getLogger(__name__)


class Isolation(enum.Enum):
    COMMITTED = "COMMITTED"
    UNCOMMITTED = "UNCOMMITTED"
