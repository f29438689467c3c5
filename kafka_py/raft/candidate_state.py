"""Port of raft/src/main/java/org/apache/kafka/raft/CandidateState.java (Kafka 2.8.2).

A voter standing for election in a new epoch. It counts the votes of every voter (its own
is granted from the start) and wins with a majority. When a majority has rejected it, or its
election timer runs out first, it backs off for a random time (so two candidates do not keep
splitting the vote) and then stands again in a higher epoch, with one more retry counted.
"""
from __future__ import annotations

import enum
import logging
from typing import AbstractSet, Optional

from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.epoch_state import EpochState
from kafka_py.raft.internals.timer import Timer
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


class _VoteState(enum.Enum):
    UNRECORDED = "UNRECORDED"
    GRANTED = "GRANTED"
    REJECTED = "REJECTED"


class CandidateState(EpochState):
    def __init__(self, time: Time, local_id: int, epoch: int, voters: AbstractSet[int],
                 high_watermark: Optional[LogOffsetMetadata], retries: int, election_timeout_ms: int) -> None:
        self._local_id = local_id
        self._epoch = epoch
        self._high_watermark = high_watermark
        self._retries = retries
        self._is_backing_off = False
        self._election_timeout_ms = election_timeout_ms
        self._election_timer = Timer(time, election_timeout_ms)
        self._backoff_timer = Timer(time, 0)
        self._vote_states: dict[int, _VoteState] = {voter_id: _VoteState.UNRECORDED for voter_id in voters}
        self._vote_states[local_id] = _VoteState.GRANTED

    def local_id(self) -> int:
        return self._local_id

    def majority_size(self) -> int:
        return len(self._vote_states) // 2 + 1

    def _count(self, state: _VoteState) -> int:
        return sum(1 for s in self._vote_states.values() if s is state)

    def is_backing_off(self) -> bool:
        return self._is_backing_off

    def retries(self) -> int:
        return self._retries

    def is_vote_granted(self) -> bool:
        return self._count(_VoteState.GRANTED) >= self.majority_size()

    def is_vote_rejected(self) -> bool:
        """True once so many voters rejected that a majority of grants is out of reach."""
        return self._count(_VoteState.GRANTED) + self._count(_VoteState.UNRECORDED) < self.majority_size()

    def record_granted_vote(self, remote_node_id: int) -> bool:
        """Returns True if this voter's answer had not been recorded before."""
        state = self._vote_states.get(remote_node_id)
        if state is None:
            raise ValueError(f"Attempt to grant vote to non-voter {remote_node_id}")
        if state is _VoteState.REJECTED:
            raise ValueError(f"Attempt to grant vote from node {remote_node_id} which previously rejected our request")
        self._vote_states[remote_node_id] = _VoteState.GRANTED
        return state is _VoteState.UNRECORDED

    def record_rejected_vote(self, remote_node_id: int) -> bool:
        state = self._vote_states.get(remote_node_id)
        if state is None:
            raise ValueError(f"Attempt to reject vote to non-voter {remote_node_id}")
        if state is _VoteState.GRANTED:
            raise ValueError(f"Attempt to reject vote from node {remote_node_id} which previously granted our request")
        self._vote_states[remote_node_id] = _VoteState.REJECTED
        return state is _VoteState.UNRECORDED

    def start_backing_off(self, current_time_ms: int, backoff_duration_ms: int) -> None:
        """The election failed (rejected or timed out): wait before standing again."""
        self._backoff_timer.update(current_time_ms)
        self._backoff_timer.reset(backoff_duration_ms)
        self._is_backing_off = True

    def _voters_in_state(self, state: _VoteState) -> set[int]:
        return {voter for voter, s in self._vote_states.items() if s is state}

    def unrecorded_voters(self) -> set[int]:
        return self._voters_in_state(_VoteState.UNRECORDED)

    def granting_voters(self) -> set[int]:
        return self._voters_in_state(_VoteState.GRANTED)

    def rejecting_voters(self) -> set[int]:
        return self._voters_in_state(_VoteState.REJECTED)

    def has_election_timeout_expired(self, current_time_ms: int) -> bool:
        self._election_timer.update(current_time_ms)
        return self._election_timer.is_expired()

    def is_backoff_complete(self, current_time_ms: int) -> bool:
        self._backoff_timer.update(current_time_ms)
        return self._backoff_timer.is_expired()

    def remaining_backoff_ms(self, current_time_ms: int) -> int:
        if not self._is_backing_off:
            raise RuntimeError("Candidate is not currently backing off")
        self._backoff_timer.update(current_time_ms)
        return self._backoff_timer.remaining_ms()

    def remaining_election_time_ms(self, current_time_ms: int) -> int:
        self._election_timer.update(current_time_ms)
        return self._election_timer.remaining_ms()

    def election(self) -> ElectionState:
        return ElectionState.with_voted_candidate(self._epoch, self._local_id, frozenset(self._vote_states))

    def epoch(self) -> int:
        return self._epoch

    def high_watermark(self) -> Optional[LogOffsetMetadata]:
        return self._high_watermark

    def name(self) -> str:
        return "Candidate"

    def __str__(self) -> str:
        return (f"Candidate(localId={self._local_id}, epoch={self._epoch}, retries={self._retries}, "
                f"electionTimeoutMs={self._election_timeout_ms})")
