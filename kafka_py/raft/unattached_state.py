"""Port of raft/src/main/java/org/apache/kafka/raft/UnattachedState.java (Kafka 2.8.2).

A node that knows an epoch but neither its leader nor a vote of its own in it: where every
node starts, and where a voter goes when it sees a higher epoch without a leader. A voter
becomes a candidate when the election timer runs out; an observer never does (its timeout
is Long.MAX_VALUE) and instead asks the voters who leads.
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


class UnattachedState(EpochState):
    def __init__(self, time: Time, epoch: int, voters: AbstractSet[int],
                 high_watermark: Optional[LogOffsetMetadata], election_timeout_ms: int) -> None:
        self._epoch = epoch
        self._voters = frozenset(voters)
        self._high_watermark = high_watermark
        self._election_timeout_ms = election_timeout_ms
        self._election_timer = Timer(time, election_timeout_ms)

    def election(self) -> ElectionState:
        return ElectionState(self._epoch, None, None, self._voters)

    def epoch(self) -> int:
        return self._epoch

    def name(self) -> str:
        return "Unattached"

    def election_timeout_ms(self) -> int:
        return self._election_timeout_ms

    def remaining_election_time_ms(self, current_time_ms: int) -> int:
        self._election_timer.update(current_time_ms)
        return self._election_timer.remaining_ms()

    def has_election_timeout_expired(self, current_time_ms: int) -> bool:
        self._election_timer.update(current_time_ms)
        return self._election_timer.is_expired()

    def high_watermark(self) -> Optional[LogOffsetMetadata]:
        return self._high_watermark

    def __str__(self) -> str:
        return (f"Unattached(epoch={self._epoch}, voters={sorted(self._voters)}, "
                f"electionTimeoutMs={self._election_timeout_ms})")
