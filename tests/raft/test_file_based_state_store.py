"""FileBasedStateStore: Kafka's quorum-state JSON, both directions, and bad files."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.file_based_state_store import FileBasedStateStore
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.quorum_state import QuorumState
from kafka_py.clients.common.utils.time import MockTime

# What Kafka 2.8.2's FileBasedStateStore writes for leader 1 in epoch 2 of voters {1, 2, 3}.
KAFKA_FILE = ('{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,'
              '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}')


def test_reads_kafka_written_file(tmp_path):
    path = tmp_path / "quorum-state"
    path.write_text(KAFKA_FILE)
    state = FileBasedStateStore(path).read_election_state()
    assert state == ElectionState.with_elected_leader(2, 1, {1, 2, 3})
    assert state.voters == {1, 2, 3}


def test_writes_kafka_format_byte_for_byte(tmp_path):
    path = tmp_path / "quorum-state"
    FileBasedStateStore(path).write_election_state(ElectionState.with_elected_leader(2, 1, {3, 2, 1}))
    assert path.read_text() == KAFKA_FILE
    assert not (tmp_path / "quorum-state.tmp").exists()


def test_voted_and_unknown_round_trip(tmp_path):
    store = FileBasedStateStore(tmp_path / "quorum-state")
    assert store.read_election_state() is None
    store.write_election_state(ElectionState.with_voted_candidate(7, 2, {1, 2}))
    assert json.loads((tmp_path / "quorum-state").read_text())["votedId"] == 2
    assert store.read_election_state() == ElectionState.with_voted_candidate(7, 2, {1, 2})
    store.write_election_state(ElectionState.with_unknown_leader(8, {1, 2}))
    assert store.read_election_state() == ElectionState.with_unknown_leader(8, {1, 2})
    store.clear()
    assert store.read_election_state() is None


@settings(max_examples=30, deadline=None)
@given(epoch=st.integers(0, 2**31 - 1), voters=st.sets(st.integers(0, 2**31 - 1), min_size=1, max_size=7),
       kind=st.sampled_from(["leader", "voted", "unknown"]), data=st.data())
def test_round_trip_property(tmp_path_factory, epoch, voters, kind, data):
    path = tmp_path_factory.mktemp("qs") / "quorum-state"
    chosen = data.draw(st.sampled_from(sorted(voters)))
    if kind == "leader":
        state = ElectionState.with_elected_leader(epoch, chosen, voters)
    elif kind == "voted":
        state = ElectionState.with_voted_candidate(epoch, chosen, voters)
    else:
        state = ElectionState.with_unknown_leader(epoch, voters)
    store = FileBasedStateStore(path)
    store.write_election_state(state)
    read = store.read_election_state()
    assert read == state and read.voters == state.voters


@pytest.mark.parametrize("content", ["", "not json", "[1, 2]", '{"clusterId":""}'])
def test_unreadable_files_raise_oserror(tmp_path, content):
    path = tmp_path / "quorum-state"
    path.write_text(content)
    with pytest.raises(OSError):
        FileBasedStateStore(path).read_election_state()


@pytest.mark.parametrize("content", [
    '{"clusterId":"","leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":[],"data_version":0}',
    '{"clusterId":"","leaderId":"x","leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":[],'
    '"data_version":0}',
    '{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":[{}],'
    '"data_version":0}',
])
def test_malformed_fields_raise_valueerror(tmp_path, content):
    path = tmp_path / "quorum-state"
    path.write_text(content)
    with pytest.raises(ValueError):
        FileBasedStateStore(path).read_election_state()


def test_quorum_state_clears_a_garbage_file_and_starts_over(tmp_path):
    path = tmp_path / "quorum-state"
    path.write_text("garbage")
    import random
    state = QuorumState(1, {1, 2, 3}, 1000, 2000, FileBasedStateStore(path), MockTime(0, 0), random.Random(1))
    state.initialize(OffsetAndEpoch(0, 0))
    assert state.is_unattached() and state.epoch() == 0
    assert FileBasedStateStore(path).read_election_state() == ElectionState.with_unknown_leader(0, {1, 2, 3})
