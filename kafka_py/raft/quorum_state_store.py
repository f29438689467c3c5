"""Port of raft/src/main/java/org/apache/kafka/raft/QuorumStateStore.java (Kafka 2.8.2).

Where a raft node keeps its ElectionState across restarts. A write must replace the old
state atomically: a crash leaves either the old election or the new one, never a mix, or a
node could forget a vote it gave and vote twice in one epoch.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Optional

from kafka_py.raft.election_state import ElectionState

logger = logging.getLogger(__name__)

UNKNOWN_LEADER_ID = -1
NOT_VOTED = -1


class QuorumStateStore(ABC):
    UNKNOWN_LEADER_ID = UNKNOWN_LEADER_ID
    NOT_VOTED = NOT_VOTED

    @abstractmethod
    def read_election_state(self) -> Optional[ElectionState]:
        """The last written election, or None if none was ever written. Raises OSError when
        the stored state cannot be read."""

    @abstractmethod
    def write_election_state(self, latest: ElectionState) -> None:
        """Persist ``latest`` atomically, replacing the previous state."""

    @abstractmethod
    def clear(self) -> None:
        """Forget everything stored, for a fresh start."""
