"""The epoch states on their own: votes, timers, the leader's high watermark from the voters'
fetch offsets, observers, resignation (Kafka's CandidateStateTest, LeaderStateTest,
FollowerStateTest, VotedStateTest, UnattachedStateTest, ResignedStateTest)."""
import pytest

from kafka_py.raft.candidate_state import CandidateState
from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.follower_state import FollowerState
from kafka_py.raft.leader_state import OBSERVER_SESSION_TIMEOUT_MS, LeaderState
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.raft.resigned_state import ResignedState
from kafka_py.raft.unattached_state import UnattachedState
from kafka_py.raft.voted_state import VotedState
from kafka_py.clients.common.utils.time import MockTime


@pytest.fixture
def time():
    return MockTime(current_time_ms=1_000, current_hi_res_time_ns=0)


# ---- candidate ------------------------------------------------------------------------------

def test_single_node_candidate_wins_at_once(time):
    state = CandidateState(time, 1, 2, {1}, None, 1, 100)
    assert state.is_vote_granted()
    assert not state.is_vote_rejected()
    assert state.unrecorded_voters() == set()
    assert state.election() == ElectionState.with_voted_candidate(2, 1, {1})


def test_candidate_needs_a_majority_of_three(time):
    state = CandidateState(time, 1, 2, {1, 2, 3}, None, 1, 100)
    assert not state.is_vote_granted()
    assert state.unrecorded_voters() == {2, 3}
    assert state.record_granted_vote(2)
    assert state.is_vote_granted()
    assert not state.record_granted_vote(2)  # recorded before


def test_candidate_rejected_by_a_majority(time):
    state = CandidateState(time, 1, 2, {1, 2, 3, 4, 5}, None, 1, 100)
    assert state.record_rejected_vote(2)
    assert state.record_rejected_vote(3)
    assert not state.is_vote_rejected()  # 1 granted + 2 unrecorded can still make 3
    state.record_rejected_vote(4)
    assert state.is_vote_rejected()
    assert state.rejecting_voters() == {2, 3, 4}


def test_candidate_refuses_contradicting_or_foreign_votes(time):
    state = CandidateState(time, 1, 2, {1, 2, 3}, None, 1, 100)
    state.record_rejected_vote(2)
    with pytest.raises(ValueError):
        state.record_granted_vote(2)
    state.record_granted_vote(3)
    with pytest.raises(ValueError):
        state.record_rejected_vote(3)
    with pytest.raises(ValueError):
        state.record_granted_vote(9)


def test_candidate_election_timer_and_backoff(time):
    state = CandidateState(time, 1, 2, {1, 2, 3}, None, 1, 100)
    with pytest.raises(RuntimeError):
        state.remaining_backoff_ms(time.milliseconds())
    time.sleep(60)
    assert state.remaining_election_time_ms(time.milliseconds()) == 40
    assert not state.has_election_timeout_expired(time.milliseconds())
    time.sleep(40)
    assert state.has_election_timeout_expired(time.milliseconds())
    state.start_backing_off(time.milliseconds(), 30)
    assert state.is_backing_off()
    assert state.remaining_backoff_ms(time.milliseconds()) == 30
    time.sleep(30)
    assert state.is_backoff_complete(time.milliseconds())


# ---- leader ---------------------------------------------------------------------------------

def test_leader_single_voter_high_watermark_needs_epoch_start_passed(time):
    state = LeaderState(1, 5, 15, {1}, {1})
    assert state.high_watermark() is None
    assert not state.update_local_state(0, LogOffsetMetadata(15))  # not past the epoch start
    assert state.high_watermark() is None
    assert state.update_local_state(0, LogOffsetMetadata(16))
    assert state.high_watermark() == LogOffsetMetadata(16)


def test_leader_high_watermark_is_majority_fetch_offset(time):
    state = LeaderState(1, 5, 10, {1, 2, 3}, {1, 2})
    assert state.non_acknowledging_voters() == {2, 3}
    assert not state.update_local_state(0, LogOffsetMetadata(15))
    assert not state.update_replica_state(2, 0, LogOffsetMetadata(10))  # majority at 10 = epoch start
    assert state.high_watermark() is None
    assert state.update_replica_state(3, 0, LogOffsetMetadata(13))
    assert state.high_watermark() == LogOffsetMetadata(13)
    assert state.update_replica_state(2, 0, LogOffsetMetadata(15))
    assert state.high_watermark() == LogOffsetMetadata(15)
    assert state.non_acknowledging_voters() == set()
    assert state.non_leader_voters_by_descending_fetch_offset() == [2, 3]


def test_leader_high_watermark_never_moves_back(time):
    state = LeaderState(1, 5, 0, {1, 2, 3}, {1, 2})
    state.update_local_state(0, LogOffsetMetadata(20))
    state.update_replica_state(2, 0, LogOffsetMetadata(20))
    assert state.high_watermark().offset == 20
    # The third voter lagging does not pull it down, and end offsets may not go back.
    assert not state.update_replica_state(3, 0, LogOffsetMetadata(5))
    assert state.high_watermark().offset == 20
    with pytest.raises(ValueError):
        state.update_replica_state(2, 0, LogOffsetMetadata(19))


def test_leader_high_watermark_with_four_voters_needs_three(time):
    state = LeaderState(1, 5, 0, {1, 2, 3, 4}, {1, 2, 3})
    state.update_local_state(0, LogOffsetMetadata(10))
    state.update_replica_state(2, 0, LogOffsetMetadata(10))
    assert state.high_watermark() is None
    state.update_replica_state(3, 0, LogOffsetMetadata(8))
    assert state.high_watermark().offset == 8


def test_leader_tracks_observers_and_forgets_silent_ones(time):
    state = LeaderState(1, 5, 0, {1, 2, 3}, {1, 2})
    assert not state.update_replica_state(7, 0, LogOffsetMetadata(10))  # an observer: no effect on the HW
    assert not state.update_replica_state(-1, 0, LogOffsetMetadata(10))  # a consumer: ignored
    assert state.get_observer_states(0) == {7: 10}
    assert state.get_voter_end_offsets() == {1: -1, 2: -1, 3: -1}
    assert state.get_observer_states(OBSERVER_SESSION_TIMEOUT_MS) == {}
    with pytest.raises(ValueError):
        state.add_acknowledgement_from(7)


# ---- follower / voted / unattached / resigned ------------------------------------------------

def test_follower_fetch_timeout_and_high_watermark(time):
    state = FollowerState(time, 3, 2, {1, 2, 3}, None, 500)
    time.sleep(400)
    assert state.remaining_fetch_time_ms(time.milliseconds()) == 100
    state.reset_fetch_timeout(time.milliseconds())
    time.sleep(499)
    assert not state.has_fetch_timeout_expired(time.milliseconds())
    time.sleep(1)
    assert state.has_fetch_timeout_expired(time.milliseconds())
    assert state.update_high_watermark(10)
    assert not state.update_high_watermark(10)
    with pytest.raises(ValueError):
        state.update_high_watermark(9)
    with pytest.raises(ValueError):
        state.update_high_watermark(None)
    assert state.election() == ElectionState.with_elected_leader(3, 2, {1, 2, 3})


def test_voted_state(time):
    state = VotedState(time, 4, 2, {1, 2, 3}, None, 300)
    assert state.election() == ElectionState.with_voted_candidate(4, 2, {1, 2, 3})
    time.sleep(299)
    assert not state.has_election_timeout_expired(time.milliseconds())
    time.sleep(1)
    assert state.has_election_timeout_expired(time.milliseconds())


def test_unattached_state(time):
    state = UnattachedState(time, 4, {1, 2, 3}, LogOffsetMetadata(7), 300)
    assert state.election() == ElectionState.with_unknown_leader(4, {1, 2, 3})
    assert state.high_watermark() == LogOffsetMetadata(7)
    time.sleep(300)
    assert state.has_election_timeout_expired(time.milliseconds())


def test_resigned_state(time):
    state = ResignedState(time, 1, 4, {1, 2, 3}, 300, [3, 2])
    assert state.unacked_voters() == {2, 3}
    state.acknowledge_resignation(2)
    assert state.unacked_voters() == {3}
    with pytest.raises(ValueError):
        state.acknowledge_resignation(9)
    assert state.election() == ElectionState.with_elected_leader(4, 1, {1, 2, 3})
    assert state.preferred_successors() == [3, 2]


def test_election_state_validation():
    with pytest.raises(ValueError):
        ElectionState.with_voted_candidate(1, 5, {1, 2})
    with pytest.raises(ValueError):
        ElectionState.with_elected_leader(1, -1, {1, 2})
    e = ElectionState.with_unknown_leader(3, {1})
    with pytest.raises(RuntimeError):
        e.leader_id()
    # Equality ignores the voters, as Kafka's does.
    assert ElectionState.with_elected_leader(2, 1, {1}) == ElectionState.with_elected_leader(2, 1, {1, 2})
