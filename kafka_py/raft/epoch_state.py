"""Port of raft/src/main/java/org/apache/kafka/raft/EpochState.java (Kafka 2.8.2).

The interface of the states a raft node is in for one epoch (unattached, voted,
candidate, leader, follower, resigned). Each state is immutable in its epoch and election;
what changes inside it (votes, timers, replica progress) belongs to that epoch only, so a
transition always builds a new state object.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Optional

from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata

logger = logging.getLogger(__name__)


class EpochState(ABC):
    def high_watermark(self) -> Optional[LogOffsetMetadata]:
        return None

    @abstractmethod
    def election(self) -> ElectionState:
        """The (immutable) election this state persists."""

    @abstractmethod
    def epoch(self) -> int:
        ...

    @abstractmethod
    def name(self) -> str:
        """A name for people: Unattached, Voted, Candidate, Leader, Follower, Resigned."""

    def close(self) -> None:
        """Release what the state holds (a follower's snapshot download, once KIP-630 lands)."""
