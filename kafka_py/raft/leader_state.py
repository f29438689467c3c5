"""Port of raft/src/main/java/org/apache/kafka/raft/LeaderState.java (Kafka 2.8.2).

The elected leader of an epoch. It tracks, for every voter, the end offset its last Fetch
reported and whether it has acknowledged the leadership (BeginQuorumEpoch answered or a
Fetch received); and, for observers, their end offsets and last fetch time (an observer
silent for five minutes is forgotten).

The high watermark is the end offset a majority of voters has reached: sort the voters by
end offset, largest first, and take the one at index ``len(voters) // 2``. It only counts
once it is past ``epoch_start_offset``, the log end when this leader was elected: a
record of the new epoch must be committed first, because only then are the earlier
epochs' uncommitted records known to survive (the Raft paper's "commit only current term
entries" rule). It never moves back, so a new leader starts without one rather than
inheriting the value it knew as a follower.
"""
from __future__ import annotations

import logging
from typing import AbstractSet, Optional

from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.epoch_state import EpochState
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata

logger = logging.getLogger(__name__)

OBSERVER_SESSION_TIMEOUT_MS = 300_000


class ReplicaState:
    """One replica's progress as the leader sees it."""

    __slots__ = ("node_id", "end_offset", "last_fetch_timestamp")

    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self.end_offset: Optional[LogOffsetMetadata] = None
        self.last_fetch_timestamp: Optional[int] = None

    def update_fetch_timestamp(self, current_fetch_time_ms: int) -> None:
        previous = -1 if self.last_fetch_timestamp is None else self.last_fetch_timestamp
        self.last_fetch_timestamp = max(previous, current_fetch_time_ms)

    def sort_key(self) -> tuple[int, int, int]:
        # Largest end offset first; replicas that have not reported go last; ties by id.
        if self.end_offset is None:
            return (1, 0, self.node_id)
        return (0, -self.end_offset.offset, self.node_id)


class VoterState(ReplicaState):
    __slots__ = ("has_acknowledged_leader",)

    def __init__(self, node_id: int, has_acknowledged_leader: bool) -> None:
        super().__init__(node_id)
        self.has_acknowledged_leader = has_acknowledged_leader


class LeaderState(EpochState):
    def __init__(self, local_id: int, epoch: int, epoch_start_offset: int, voters: AbstractSet[int],
                 granting_voters: AbstractSet[int]) -> None:
        self._local_id = local_id
        self._epoch = epoch
        self._epoch_start_offset = epoch_start_offset
        self._high_watermark: Optional[LogOffsetMetadata] = None
        self._voter_states: dict[int, VoterState] = {
            voter_id: VoterState(voter_id, voter_id == local_id) for voter_id in voters
        }
        self._observer_states: dict[int, ReplicaState] = {}
        self._granting_voters = frozenset(granting_voters)
        # Set from another thread (the controller renouncing), read by the raft thread's poll.
        self._resign_requested = False

    def request_resign(self) -> None:
        self._resign_requested = True

    def is_resign_requested(self) -> bool:
        return self._resign_requested

    def high_watermark(self) -> Optional[LogOffsetMetadata]:
        return self._high_watermark

    def election(self) -> ElectionState:
        return ElectionState.with_elected_leader(self._epoch, self._local_id, frozenset(self._voter_states))

    def epoch(self) -> int:
        return self._epoch

    def followers(self) -> set[int]:
        return {voter_id for voter_id in self._voter_states if voter_id != self._local_id}

    def granting_voters(self) -> frozenset[int]:
        return self._granting_voters

    def local_id(self) -> int:
        return self._local_id

    def non_acknowledging_voters(self) -> set[int]:
        return {state.node_id for state in self._voter_states.values() if not state.has_acknowledged_leader}

    def _update_high_watermark(self) -> bool:
        voters = self._followers_by_descending_fetch_offset()
        candidate = voters[len(self._voter_states) // 2].end_offset
        if candidate is None or candidate.offset <= self._epoch_start_offset:
            return False
        current = self._high_watermark
        if current is None or candidate.offset > current.offset or (
                candidate.offset == current.offset and candidate.metadata != current.metadata):
            self._high_watermark = candidate
            return True
        return False

    def update_local_state(self, fetch_timestamp: int, log_offset_metadata: LogOffsetMetadata) -> bool:
        return self.update_replica_state(self._local_id, fetch_timestamp, log_offset_metadata)

    def update_replica_state(self, replica_id: int, fetch_timestamp: int,
                             log_offset_metadata: LogOffsetMetadata) -> bool:
        """Record a replica's fetch position; True if the high watermark moved."""
        # A negative replica id is a plain consumer, not a replica: it does not count.
        if replica_id < 0:
            return False
        state = self.get_replica_state(replica_id)
        state.update_fetch_timestamp(fetch_timestamp)
        return self._update_end_offset(state, log_offset_metadata)

    def non_leader_voters_by_descending_fetch_offset(self) -> list[int]:
        return [state.node_id for state in self._followers_by_descending_fetch_offset()
                if state.node_id != self._local_id]

    def _followers_by_descending_fetch_offset(self) -> list[VoterState]:
        return sorted(self._voter_states.values(), key=ReplicaState.sort_key)

    def _update_end_offset(self, state: ReplicaState, end_offset_metadata: LogOffsetMetadata) -> bool:
        if state.end_offset is not None and state.end_offset.offset > end_offset_metadata.offset:
            raise ValueError(f"Non-monotonic update to end offset for nodeId {state.node_id}")
        state.end_offset = end_offset_metadata
        if isinstance(state, VoterState):
            state.has_acknowledged_leader = True
            return self._update_high_watermark()
        return False

    def add_acknowledgement_from(self, remote_node_id: int) -> None:
        self._ensure_valid_voter(remote_node_id).has_acknowledged_leader = True

    def _ensure_valid_voter(self, remote_node_id: int) -> VoterState:
        state = self._voter_states.get(remote_node_id)
        if state is None:
            raise ValueError(f"Unexpected acknowledgement from non-voter {remote_node_id}")
        return state

    def epoch_start_offset(self) -> int:
        return self._epoch_start_offset

    def get_replica_state(self, remote_node_id: int) -> ReplicaState:
        state = self._voter_states.get(remote_node_id)
        if state is not None:
            return state
        return self._observer_states.setdefault(remote_node_id, ReplicaState(remote_node_id))

    def get_voter_end_offsets(self) -> dict[int, int]:
        return _end_offsets(self._voter_states)

    def get_observer_states(self, current_time_ms: int) -> dict[int, int]:
        self._clear_inactive_observers(current_time_ms)
        return _end_offsets(self._observer_states)

    def _clear_inactive_observers(self, current_time_ms: int) -> None:
        for node_id, state in list(self._observer_states.items()):
            last = -1 if state.last_fetch_timestamp is None else state.last_fetch_timestamp
            if current_time_ms - last >= OBSERVER_SESSION_TIMEOUT_MS:
                del self._observer_states[node_id]

    def name(self) -> str:
        return "Leader"

    def __str__(self) -> str:
        return f"Leader(localId={self._local_id}, epoch={self._epoch}, epochStartOffset={self._epoch_start_offset})"


def _end_offsets(states: dict) -> dict[int, int]:
    return {node_id: -1 if s.end_offset is None else s.end_offset.offset for node_id, s in states.items()}
