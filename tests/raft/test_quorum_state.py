"""QuorumState: initialization from the stored election and every transition's rules
(Kafka's QuorumStateTest)."""
import random

import pytest

from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.quorum_state import QuorumState
from kafka_py.clients.common.utils.time import MockTime
from tests.raft.mocks import MockQuorumStateStore

LOCAL_ID = 0
ELECTION_TIMEOUT_MS = 5000
FETCH_TIMEOUT_MS = 10000


def build(voters, local_id=LOCAL_ID, store=None):
    store = store or MockQuorumStateStore()
    time = MockTime(current_time_ms=0, current_hi_res_time_ns=0)
    state = QuorumState(local_id, voters, ELECTION_TIMEOUT_MS, FETCH_TIMEOUT_MS, store, time, random.Random(7))
    return state, store, time


def test_fresh_start_is_unattached_epoch_zero():
    state, store, _ = build({0, 1, 2})
    state.initialize(OffsetAndEpoch(0, 0))
    assert state.is_unattached()
    assert state.epoch() == 0
    assert store.read_election_state() == ElectionState.with_unknown_leader(0, {0, 1, 2})
    timeout = state.unattached_state_or_throw().election_timeout_ms()
    assert ELECTION_TIMEOUT_MS <= timeout < 2 * ELECTION_TIMEOUT_MS


def test_former_leader_comes_back_resigned():
    store = MockQuorumStateStore()
    store.write_election_state(ElectionState.with_elected_leader(4, LOCAL_ID, {0, 1, 2}))
    state, _, _ = build({0, 1, 2}, store=store)
    state.initialize(OffsetAndEpoch(10, 4))
    assert state.is_resigned()
    assert state.epoch() == 4
    assert state.resigned_state_or_throw().unacked_voters() == {1, 2}


def test_former_candidate_comes_back_candidate_and_voter_keeps_vote():
    store = MockQuorumStateStore()
    store.write_election_state(ElectionState.with_voted_candidate(3, LOCAL_ID, {0, 1, 2}))
    state, _, _ = build({0, 1, 2}, store=store)
    state.initialize(OffsetAndEpoch(0, 0))
    assert state.is_candidate() and state.epoch() == 3

    store.write_election_state(ElectionState.with_voted_candidate(3, 2, {0, 1, 2}))
    state, _, _ = build({0, 1, 2}, store=store)
    state.initialize(OffsetAndEpoch(0, 0))
    assert state.is_voted() and state.voted_state_or_throw().voted_id() == 2


def test_stale_state_file_yields_to_log_epoch():
    store = MockQuorumStateStore()
    store.write_election_state(ElectionState.with_elected_leader(2, 1, {0, 1, 2}))
    state, _, _ = build({0, 1, 2}, store=store)
    state.initialize(OffsetAndEpoch(50, 6))
    assert state.is_unattached() and state.epoch() == 6


def test_voter_set_change_is_refused():
    store = MockQuorumStateStore()
    store.write_election_state(ElectionState.with_unknown_leader(2, {0, 1, 2}))
    state, _, _ = build({0, 1, 2, 3}, store=store)
    with pytest.raises(RuntimeError, match="different from the voter set"):
        state.initialize(OffsetAndEpoch(0, 0))


def test_unreadable_store_is_cleared():
    class BrokenStore(MockQuorumStateStore):
        cleared = False

        def read_election_state(self):
            raise OSError("corrupt")

        def clear(self):
            self.cleared = True

    store = BrokenStore()
    state, _, _ = build({0, 1, 2}, store=store)
    state.initialize(OffsetAndEpoch(0, 0))
    assert store.cleared
    assert state.is_unattached() and state.epoch() == 0


def test_candidate_to_leader_needs_majority():
    state, store, _ = build({0, 1, 2})
    state.initialize(OffsetAndEpoch(0, 0))
    state.transition_to_candidate()
    assert state.epoch() == 1
    assert store.read_election_state() == ElectionState.with_voted_candidate(1, 0, {0, 1, 2})
    with pytest.raises(RuntimeError):
        state.transition_to_leader(0)
    state.candidate_state_or_throw().record_granted_vote(1)
    state.transition_to_leader(0)
    assert state.is_leader()
    assert state.leader_and_epoch().leader_id == LOCAL_ID
    assert store.read_election_state() == ElectionState.with_elected_leader(1, 0, {0, 1, 2})
    with pytest.raises(RuntimeError):
        state.transition_to_candidate()
    with pytest.raises(RuntimeError):
        state.transition_to_follower(1, 1)


def test_candidate_retries_increase():
    state, _, _ = build({0, 1, 2})
    state.initialize(OffsetAndEpoch(0, 0))
    state.transition_to_candidate()
    state.transition_to_candidate()
    assert state.candidate_state_or_throw().retries() == 2
    assert state.epoch() == 2


def test_voted_rules():
    state, store, _ = build({0, 1, 2})
    state.initialize(OffsetAndEpoch(0, 0))
    with pytest.raises(RuntimeError):
        state.transition_to_voted(1, LOCAL_ID)  # not for ourselves
    with pytest.raises(RuntimeError):
        state.transition_to_voted(1, 7)  # not for a non-voter
    state.transition_to_voted(1, 2)
    assert store.read_election_state() == ElectionState.with_voted_candidate(1, 2, {0, 1, 2})
    with pytest.raises(RuntimeError):
        state.transition_to_voted(1, 1)  # one vote per epoch
    with pytest.raises(RuntimeError):
        state.transition_to_voted(0, 1)  # no going back
    state.transition_to_follower(1, 2)
    assert state.is_follower() and state.leader_id() == 2


def test_follower_and_unattached_rules():
    state, _, _ = build({0, 1, 2})
    state.initialize(OffsetAndEpoch(0, 0))
    state.transition_to_follower(3, 1)
    with pytest.raises(RuntimeError):
        state.transition_to_follower(3, 2)  # a second leader in one epoch
    with pytest.raises(RuntimeError):
        state.transition_to_follower(2, 2)
    with pytest.raises(RuntimeError):
        state.transition_to_follower(4, LOCAL_ID)
    with pytest.raises(RuntimeError):
        state.transition_to_unattached(3)
    state.transition_to_unattached(5)
    assert state.is_unattached() and state.epoch() == 5 and not state.has_leader()


def test_leader_resigns_without_persisting():
    state, store, _ = build({0})
    state.initialize(OffsetAndEpoch(0, 0))
    with pytest.raises(RuntimeError):
        state.transition_to_resigned([])
    state.transition_to_candidate()
    state.transition_to_leader(0)
    state.transition_to_resigned([])
    assert state.is_resigned()
    assert store.read_election_state() == ElectionState.with_elected_leader(1, 0, {0})


def test_observer_cannot_vote_or_stand():
    state, _, _ = build({1, 2, 3}, local_id=None)
    state.initialize(OffsetAndEpoch(0, 0))
    assert state.is_observer()
    with pytest.raises(RuntimeError):
        state.transition_to_candidate()
    with pytest.raises(RuntimeError):
        state.transition_to_voted(1, 2)
    state.transition_to_unattached(2)
    assert state.unattached_state_or_throw().election_timeout_ms() >= 2 ** 62
    state.transition_to_follower(2, 1)
    assert state.has_remote_leader()


def test_observer_with_stored_vote_is_refused():
    store = MockQuorumStateStore()
    store.write_election_state(ElectionState.with_voted_candidate(3, 2, {1, 2, 3}))
    state, _, _ = build({1, 2, 3}, local_id=9, store=store)
    with pytest.raises(RuntimeError, match="not a voter"):
        state.initialize(OffsetAndEpoch(0, 0))
