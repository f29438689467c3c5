"""Port of raft/src/main/java/org/apache/kafka/raft/QuorumState.java (Kafka 2.8.2).

The state machine of one raft node's role, one EpochState at a time, and the only place
that changes it. Every transition persists the new ElectionState (QuorumStateStore) before
the node acts on it, so a vote or an epoch is never forgotten by a restart.

The transitions and what allows them::

    Unattached|Voted|Candidate|Follower|Leader|Resigned -> Unattached   (a higher epoch, no leader known)
    Unattached (same or higher epoch), anything (higher) -> Voted        (vote granted; voters only)
    anything but Leader                                  -> Candidate    (epoch + 1; voters only)
    Candidate with a majority of votes                   -> Leader
    anything (higher epoch), Unattached|Voted|Candidate|Resigned (same) -> Follower
    Leader                                               -> Resigned     (graceful shutdown)

``initialize`` picks the starting state from the stored election: a node that was leader
comes back Resigned in that epoch, one that was candidate comes back Candidate, and a
stored epoch older than the log's last epoch is replaced by the log's (the state file was
lost or is stale) as Unattached.

Called from the raft client's thread only; ``leader_and_epoch`` may be read by others, so the
state reference is swapped under a lock.
"""
from __future__ import annotations

import logging
import random as _random
import threading
from typing import AbstractSet, Optional, Sequence

from kafka_py.raft.candidate_state import CandidateState
from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.epoch_state import EpochState
from kafka_py.raft.follower_state import FollowerState
from kafka_py.raft.leader_and_epoch import LeaderAndEpoch
from kafka_py.raft.leader_state import LeaderState
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.quorum_state_store import QuorumStateStore
from kafka_py.raft.resigned_state import ResignedState
from kafka_py.raft.unattached_state import UnattachedState
from kafka_py.raft.voted_state import VotedState
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


class QuorumState:
    def __init__(self, local_id: Optional[int], voters: AbstractSet[int], election_timeout_ms: int,
                 fetch_timeout_ms: int, store: QuorumStateStore, time: Time, random: _random.Random,
                 log_prefix: str = "") -> None:
        self._local_id = local_id
        self._voters = frozenset(voters)
        self._election_timeout_ms = election_timeout_ms
        self._fetch_timeout_ms = fetch_timeout_ms
        self._store = store
        self._time = time
        self._random = random
        self._log_prefix = log_prefix
        self._lock = threading.Lock()
        self._state: Optional[EpochState] = None

    @property
    def state(self) -> EpochState:
        with self._lock:
            state = self._state
        if state is None:
            raise RuntimeError("QuorumState has not been initialized")
        return state

    def initialize(self, log_end_offset_and_epoch: OffsetAndEpoch) -> None:
        # We start in whatever state we were in at shutdown. A leader or candidate may have
        # been overtaken since; the Vote and BeginQuorumEpoch answers will tell us.
        try:
            election = self._store.read_election_state()
            if election is None:
                election = ElectionState.with_unknown_leader(0, self._voters)
        except OSError as e:
            # A state file that cannot be read is taken as lost: start over from epoch 0
            # (the log's last epoch below still keeps us from going back in time).
            logger.warning("%sClearing local quorum state store after error loading state %s: %s",
                           self._log_prefix, self._store, e)
            self._store.clear()
            election = ElectionState.with_unknown_leader(0, self._voters)

        if election.voters and self._voters != election.voters:
            raise RuntimeError(
                f"Configured voter set: {sorted(self._voters)} is different from the voter set read from the "
                f"state file: {sorted(election.voters)}. Check if the quorum configuration is up to date, "
                "or wipe out the local state file if necessary")
        if election.has_voted() and not self.is_voter():
            description = f"{self._local_id} is not a voter" if self._local_id is not None else "is undefined"
            raise RuntimeError(
                f"Initialized quorum state {election} with a voted candidate, which indicates this node was "
                f"previously a voter, but the local id {description}")

        local_id = self._local_id
        if election.epoch < log_end_offset_and_epoch.epoch:
            logger.warning("%sEpoch from quorum-state file is %d, which is smaller than last written epoch %d "
                           "in the log", self._log_prefix, election.epoch, log_end_offset_and_epoch.epoch)
            initial: EpochState = UnattachedState(self._time, log_end_offset_and_epoch.epoch, self._voters, None,
                                                  self._random_election_timeout_ms())
        elif local_id is not None and election.is_leader(local_id):
            # A former leader comes back resigned in its epoch: it may neither vote for
            # another leader of that epoch nor lead it again (unflushed records lost in the
            # crash must not be rewritten under the same offsets and epoch).
            initial = ResignedState(self._time, local_id, election.epoch, self._voters,
                                    self._random_election_timeout_ms(), [])
        elif local_id is not None and election.is_voted_candidate(local_id):
            initial = CandidateState(self._time, local_id, election.epoch, self._voters, None, 1,
                                     self._random_election_timeout_ms())
        elif election.has_voted():
            initial = VotedState(self._time, election.epoch, election.voted_id(), self._voters, None,
                                 self._random_election_timeout_ms())
        elif election.has_leader():
            initial = FollowerState(self._time, election.epoch, election.leader_id(), self._voters, None,
                                    self._fetch_timeout_ms)
        else:
            initial = UnattachedState(self._time, election.epoch, self._voters, None,
                                      self._random_election_timeout_ms())
        self._transition_to(initial)

    # ---- identity ---------------------------------------------------------------
    def remote_voters(self) -> set[int]:
        return {voter for voter in self._voters if voter != self.local_id_or_sentinel()}

    def voters(self) -> frozenset[int]:
        return self._voters

    def local_id(self) -> Optional[int]:
        return self._local_id

    def local_id_or_sentinel(self) -> int:
        return -1 if self._local_id is None else self._local_id

    def local_id_or_throw(self) -> int:
        if self._local_id is None:
            raise RuntimeError("Required local id is not present")
        return self._local_id

    def epoch(self) -> int:
        return self.state.epoch()

    def leader_id_or_sentinel(self) -> int:
        leader_id = self.leader_id()
        return -1 if leader_id is None else leader_id

    def high_watermark(self) -> Optional[LogOffsetMetadata]:
        return self.state.high_watermark()

    def leader_id(self) -> Optional[int]:
        return self.state.election().leader_id_opt

    def has_leader(self) -> bool:
        return self.leader_id() is not None

    def has_remote_leader(self) -> bool:
        return self.has_leader() and self.leader_id_or_sentinel() != self.local_id_or_sentinel()

    def is_voter(self, node_id: Optional[int] = None) -> bool:
        if node_id is None:
            return self._local_id is not None and self._local_id in self._voters
        return node_id in self._voters

    def is_observer(self) -> bool:
        return not self.is_voter()

    # ---- transitions ------------------------------------------------------------
    def transition_to_resigned(self, preferred_successors: Sequence[int]) -> None:
        if not self.is_leader():
            raise RuntimeError(f"Invalid transition to Resigned state from {self.state}")
        # Resigned is not persisted: the stored election stays "this node leads the epoch",
        # which is exactly what a restart turns into Resigned again.
        state = ResignedState(self._time, self.local_id_or_throw(), self.epoch(), self._voters,
                              self._random_election_timeout_ms(), preferred_successors)
        with self._lock:
            self._state = state
        logger.info("%sCompleted transition to %s", self._log_prefix, state)

    def transition_to_unattached(self, epoch: int) -> None:
        """A higher epoch was seen, but not who leads it."""
        current_epoch = self.epoch()
        if epoch <= current_epoch:
            raise RuntimeError(f"Cannot transition to Unattached with epoch= {epoch} from current state {self.state}")
        now = self._time.milliseconds()
        state = self.state
        # Keep a running election timer: a voter that hears of a new epoch should not wait
        # longer for it than it would have waited anyway.
        if self.is_observer():
            election_timeout_ms = LONG_MAX
        elif isinstance(state, (CandidateState, VotedState, UnattachedState)):
            election_timeout_ms = state.remaining_election_time_ms(now)
        else:
            election_timeout_ms = self._random_election_timeout_ms()
        self._transition_to(UnattachedState(self._time, epoch, self._voters, state.high_watermark(),
                                            election_timeout_ms))

    def transition_to_voted(self, epoch: int, candidate_id: int) -> None:
        """Grant our vote; no fetching until the election is decided."""
        if self._local_id is not None and candidate_id == self._local_id:
            raise RuntimeError(f"Cannot transition to Voted with votedId={candidate_id} and epoch={epoch} "
                               "since it matches the local broker.id")
        if self.is_observer():
            raise RuntimeError(f"Cannot transition to Voted with votedId={candidate_id} and epoch={epoch} since "
                               f"the local broker.id={self._local_id} is not a voter")
        if not self.is_voter(candidate_id):
            raise RuntimeError(f"Cannot transition to Voted with voterId={candidate_id} and epoch={epoch} since "
                               f"it is not one of the voters {sorted(self._voters)}")
        current_epoch = self.epoch()
        if epoch < current_epoch:
            raise RuntimeError(f"Cannot transition to Voted with votedId={candidate_id} and epoch={epoch} since "
                               f"the current epoch {current_epoch} is larger")
        if epoch == current_epoch and not self.is_unattached():
            raise RuntimeError(f"Cannot transition to Voted with votedId={candidate_id} and epoch={epoch} from "
                               f"the current state {self.state}")
        # The timer restarts: the candidate we voted for has at least our chance of winning.
        self._transition_to(VotedState(self._time, epoch, candidate_id, self._voters, self.state.high_watermark(),
                                       self._random_election_timeout_ms()))

    def transition_to_follower(self, epoch: int, leader_id: int) -> None:
        if self._local_id is not None and leader_id == self._local_id:
            raise RuntimeError(f"Cannot transition to Follower with leaderId={leader_id} and epoch={epoch} since "
                               f"it matches the local broker.id={self._local_id}")
        if not self.is_voter(leader_id):
            raise RuntimeError(f"Cannot transition to Follower with leaderId={leader_id} and epoch={epoch} since "
                               f"it is not one of the voters {sorted(self._voters)}")
        current_epoch = self.epoch()
        if epoch < current_epoch:
            raise RuntimeError(f"Cannot transition to Follower with leaderId={leader_id} and epoch={epoch} since "
                               f"the current epoch {current_epoch} is larger")
        if epoch == current_epoch and (self.is_follower() or self.is_leader()):
            raise RuntimeError(f"Cannot transition to Follower with leaderId={leader_id} and epoch={epoch} from "
                               f"state {self.state}")
        self._transition_to(FollowerState(self._time, epoch, leader_id, self._voters, self.state.high_watermark(),
                                          self._fetch_timeout_ms))

    def transition_to_candidate(self) -> None:
        if self.is_observer():
            raise RuntimeError(f"Cannot transition to Candidate since the local broker.id={self._local_id} is not "
                               f"one of the voters {sorted(self._voters)}")
        if self.is_leader():
            raise RuntimeError(f"Cannot transition to Candidate since the local broker.id={self._local_id} since "
                               f"this node is already a Leader with state {self.state}")
        state = self.state
        retries = state.retries() + 1 if isinstance(state, CandidateState) else 1
        self._transition_to(CandidateState(self._time, self.local_id_or_throw(), self.epoch() + 1, self._voters,
                                           state.high_watermark(), retries, self._random_election_timeout_ms()))

    def transition_to_leader(self, epoch_start_offset: int) -> None:
        if self.is_observer():
            raise RuntimeError(f"Cannot transition to Leader since the local broker.id={self._local_id} is not "
                               f"one of the voters {sorted(self._voters)}")
        if not self.is_candidate():
            raise RuntimeError(f"Cannot transition to Leader from current state {self.state}")
        candidate_state = self.candidate_state_or_throw()
        if not candidate_state.is_vote_granted():
            raise RuntimeError("Cannot become leader without majority votes granted")
        # The new leader does not keep the high watermark it knew before: only once a
        # majority has reached the start of its epoch can it be sure the high watermark it
        # exposes never goes back. Until then the state machine above waits.
        self._transition_to(LeaderState(self.local_id_or_throw(), self.epoch(), epoch_start_offset, self._voters,
                                        candidate_state.granting_voters()))

    def _transition_to(self, state: EpochState) -> None:
        with self._lock:
            previous = self._state
        if previous is not None:
            previous.close()
        # Persist first: once we act in the new state (grant a vote, answer as leader) a
        # restart must find it.
        self._store.write_election_state(state.election())
        with self._lock:
            self._state = state
        logger.info("%sCompleted transition to %s", self._log_prefix, state)

    def _random_election_timeout_ms(self) -> int:
        if self._election_timeout_ms == 0:
            return 0
        return self._election_timeout_ms + self._random.randrange(self._election_timeout_ms)

    # ---- typed access -----------------------------------------------------------
    def _state_or_throw(self, cls: type, name: str):
        state = self.state
        if isinstance(state, cls):
            return state
        raise RuntimeError(f"Expected to be {name}, but the current state is {state}")

    def follower_state_or_throw(self) -> FollowerState:
        return self._state_or_throw(FollowerState, "Follower")

    def voted_state_or_throw(self) -> VotedState:
        return self._state_or_throw(VotedState, "Voted")

    def unattached_state_or_throw(self) -> UnattachedState:
        return self._state_or_throw(UnattachedState, "Unattached")

    def leader_state_or_throw(self) -> LeaderState:
        return self._state_or_throw(LeaderState, "Leader")

    def resigned_state_or_throw(self) -> ResignedState:
        return self._state_or_throw(ResignedState, "Resigned")

    def candidate_state_or_throw(self) -> CandidateState:
        return self._state_or_throw(CandidateState, "Candidate")

    def leader_and_epoch(self) -> LeaderAndEpoch:
        election = self.state.election()
        return LeaderAndEpoch(election.leader_id_opt, election.epoch)

    def is_follower(self) -> bool:
        return isinstance(self.state, FollowerState)

    def is_voted(self) -> bool:
        return isinstance(self.state, VotedState)

    def is_unattached(self) -> bool:
        return isinstance(self.state, UnattachedState)

    def is_leader(self) -> bool:
        return isinstance(self.state, LeaderState)

    def is_resigned(self) -> bool:
        return isinstance(self.state, ResignedState)

    def is_candidate(self) -> bool:
        return isinstance(self.state, CandidateState)

    def __str__(self) -> str:
        return f"QuorumState(localId={self._local_id}, state={self._state})"
