"""Port of raft/src/main/java/org/apache/kafka/raft/ElectionState.java (Kafka 2.8.2).

The part of a node's quorum state that must survive a restart: the epoch, the elected
leader (if known) or the candidate this node voted for (if any), and the voter set. It is
what the QuorumStateStore writes on every transition. Equality ignores the voter set, as
Kafka's does: two nodes agree on an election when epoch, leader and vote agree.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import AbstractSet, Optional

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ElectionState:
    epoch: int
    leader_id_opt: Optional[int]
    voted_id_opt: Optional[int]
    voters: frozenset[int] = field(compare=False)

    @staticmethod
    def with_voted_candidate(epoch: int, voted_id: int, voters: AbstractSet[int]) -> "ElectionState":
        if voted_id < 0:
            raise ValueError(f"Illegal voted Id {voted_id}: must be non-negative")
        if voted_id not in voters:
            raise ValueError(f"Voted candidate with id {voted_id} is not among the valid voters")
        return ElectionState(epoch, None, voted_id, frozenset(voters))

    @staticmethod
    def with_elected_leader(epoch: int, leader_id: int, voters: AbstractSet[int]) -> "ElectionState":
        if leader_id < 0:
            raise ValueError(f"Illegal leader Id {leader_id}: must be non-negative")
        if leader_id not in voters:
            raise ValueError(f"Leader with id {leader_id} is not among the valid voters")
        return ElectionState(epoch, leader_id, None, frozenset(voters))

    @staticmethod
    def with_unknown_leader(epoch: int, voters: AbstractSet[int]) -> "ElectionState":
        return ElectionState(epoch, None, None, frozenset(voters))

    def is_leader(self, node_id: int) -> bool:
        if node_id < 0:
            raise ValueError(f"Invalid negative nodeId: {node_id}")
        return self.leader_id_opt == node_id

    def is_voted_candidate(self, node_id: int) -> bool:
        if node_id < 0:
            raise ValueError(f"Invalid negative nodeId: {node_id}")
        return self.voted_id_opt == node_id

    def leader_id(self) -> int:
        if self.leader_id_opt is None:
            raise RuntimeError("Attempt to access nil leaderId")
        return self.leader_id_opt

    def voted_id(self) -> int:
        if self.voted_id_opt is None:
            raise RuntimeError("Attempt to access nil votedId")
        return self.voted_id_opt

    def has_leader(self) -> bool:
        return self.leader_id_opt is not None

    def has_voted(self) -> bool:
        return self.voted_id_opt is not None

    def __str__(self) -> str:
        return f"Election(epoch={self.epoch}, leaderIdOpt={self.leader_id_opt}, votedIdOpt={self.voted_id_opt})"
