"""Port of raft/src/main/java/org/apache/kafka/raft/LeaderAndEpoch.java (Kafka 2.8.2).

The leader a node currently knows of (None when unknown) and the epoch that knowledge is for.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LeaderAndEpoch:
    leader_id: Optional[int]
    epoch: int
