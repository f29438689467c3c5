"""Port of raft/src/main/java/org/apache/kafka/raft/VotedState.java (Kafka 2.8.2).

A voter that granted its vote to a candidate in this epoch. The vote is persisted before the
response goes out, so a restarted node can never vote twice in one epoch. The node does not
fetch yet: it waits for the candidate to win (BeginQuorumEpoch) or for its own election
timer, after which it stands itself.
"""
from __future__ import annotations

import logging
from typing import AbstractSet, Optional

from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.epoch_state import EpochState
from kafka_py.raft.internals.timer import Timer
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


class VotedState(EpochState):
    def __init__(self, time: Time, epoch: int, voted_id: int, voters: AbstractSet[int],
                 high_watermark: Optional[LogOffsetMetadata], election_timeout_ms: int) -> None:
        self._epoch = epoch
        self._voted_id = voted_id
        self._voters = frozenset(voters)
        self._high_watermark = high_watermark
        self._election_timeout_ms = election_timeout_ms
        self._election_timer = Timer(time, election_timeout_ms)

    def election(self) -> ElectionState:
        return ElectionState(self._epoch, None, self._voted_id, self._voters)

    def voted_id(self) -> int:
        return self._voted_id

    def epoch(self) -> int:
        return self._epoch

    def name(self) -> str:
        return "Voted"

    def remaining_election_time_ms(self, current_time_ms: int) -> int:
        self._election_timer.update(current_time_ms)
        return self._election_timer.remaining_ms()

    def has_election_timeout_expired(self, current_time_ms: int) -> bool:
        self._election_timer.update(current_time_ms)
        return self._election_timer.is_expired()

    def override_election_timeout(self, current_time_ms: int, timeout_ms: int) -> None:
        self._election_timer.update(current_time_ms)
        self._election_timer.reset(timeout_ms)

    def high_watermark(self) -> Optional[LogOffsetMetadata]:
        return self._high_watermark

    def __str__(self) -> str:
        return (f"Voted(epoch={self._epoch}, votedId={self._voted_id}, voters={sorted(self._voters)}, "
                f"electionTimeoutMs={self._election_timeout_ms})")
