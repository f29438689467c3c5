"""Port of raft/src/main/java/org/apache/kafka/raft/ResignedState.java (Kafka 2.8.2).

A leader that has stepped down in its epoch: on a graceful shutdown, or after a restart
(a node that was leader comes back resigned, so it cannot vote in, or lead, the same epoch
twice, and unflushed records lost in the crash cannot reappear under the same epoch). It
keeps sending EndQuorumEpoch, naming its preferred successors, to every voter that has not
acknowledged, until its election timer runs out and it stands for election itself.
Resigned is a soft state: it is persisted as the leader election it came from.
"""
from __future__ import annotations

import logging
from typing import AbstractSet, Sequence

from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.epoch_state import EpochState
from kafka_py.raft.internals.timer import Timer
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


class ResignedState(EpochState):
    def __init__(self, time: Time, local_id: int, epoch: int, voters: AbstractSet[int],
                 election_timeout_ms: int, preferred_successors: Sequence[int]) -> None:
        self._local_id = local_id
        self._epoch = epoch
        self._voters = frozenset(voters)
        self._unacked_voters = set(voters)
        self._unacked_voters.discard(local_id)
        self._election_timeout_ms = election_timeout_ms
        self._election_timer = Timer(time, election_timeout_ms)
        self._preferred_successors = list(preferred_successors)

    def election(self) -> ElectionState:
        return ElectionState.with_elected_leader(self._epoch, self._local_id, self._voters)

    def epoch(self) -> int:
        return self._epoch

    def unacked_voters(self) -> set[int]:
        """Voters that have not acknowledged the resignation yet (still sent EndQuorumEpoch)."""
        return self._unacked_voters

    def acknowledge_resignation(self, voter_id: int) -> None:
        if voter_id not in self._voters:
            raise ValueError(f"Attempt to acknowledge delivery of `EndQuorumEpoch` by a non-voter {voter_id}")
        self._unacked_voters.discard(voter_id)

    def has_election_timeout_expired(self, current_time_ms: int) -> bool:
        self._election_timer.update(current_time_ms)
        return self._election_timer.is_expired()

    def remaining_election_time_ms(self, current_time_ms: int) -> int:
        self._election_timer.update(current_time_ms)
        return self._election_timer.remaining_ms()

    def preferred_successors(self) -> list[int]:
        return self._preferred_successors

    def name(self) -> str:
        return "Resigned"

    def __str__(self) -> str:
        return (f"ResignedState(localId={self._local_id}, epoch={self._epoch}, voters={sorted(self._voters)}, "
                f"electionTimeoutMs={self._election_timeout_ms}, unackedVoters={sorted(self._unacked_voters)}, "
                f"preferredSuccessors={self._preferred_successors})")
