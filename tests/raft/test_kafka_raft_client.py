"""KafkaRaftClient driven message by message (in the style of Kafka's KafkaRaftClientTest):
elections, votes granted and refused, BeginQuorumEpoch/EndQuorumEpoch, a follower's fetch and
truncation, the leader's high watermark, appends delivered to listeners, and bad input
answered with Kafka's error and nothing changed."""
import pytest

from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.raft import raft_util
from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.core.utils.java_limits import LONG_MAX
from tests.raft.mock_log import MockLog
from tests.raft.raft_client_test_context import CLUSTER_ID, METADATA_PARTITION, RaftClientTestContext


def partition(response):
    return response.topics[0].partitions[0]


def fetch_partition(response):
    return response.responses[0].partitions[0]


def data_batch(base_offset, epoch, values):
    return build_batch([SimpleRecord(None, v.encode(), 0) for v in values], base_offset=base_offset,
                       partition_leader_epoch=epoch)


# ---- a voter alone --------------------------------------------------------------------------

def test_single_voter_elects_itself_and_commits_appends():
    ctx = RaftClientTestContext(0, {0})
    assert ctx.quorum.is_leader()
    assert ctx.current_epoch() == 1
    assert ctx.election() == ElectionState.with_elected_leader(1, 0, {0})
    # The leader's first record is the LEADER_CHANGE control batch, which commits at once.
    assert ctx.log.entries()[0][3] is True
    assert ctx.client.high_watermark() == 1
    ctx.poll()
    assert ctx.listener.claimed == [1]

    offset = ctx.client.schedule_append(1, ["a", "b"])
    assert offset == 2
    assert ctx.client.schedule_append(7, ["x"]) == LONG_MAX  # not our epoch
    ctx.poll(2)
    assert ctx.client.high_watermark() == 3
    assert ctx.listener.commits == [(1, 1, ["a", "b"])]
    assert ctx.log.last_flushed_offset() == 3


def test_single_voter_restart_resumes_with_committed_data():
    ctx = RaftClientTestContext(0, {0})
    ctx.poll()
    ctx.client.schedule_append(1, ["a"])
    ctx.poll(2)
    log, store = ctx.log, ctx.store
    log.reopen()
    again = RaftClientTestContext(0, {0}, store=store, log=log)
    # It was leader of epoch 1: it comes back resigned and must win epoch 2.
    assert again.quorum.is_leader() and again.current_epoch() == 2
    again.poll(3)
    assert again.listener.committed_records() == ["a"]


def test_a_resigning_single_voter_wins_the_next_epoch_and_keeps_its_committed_data():
    """A controller that renounces after an unexpected error resigns its raft leadership; a
    lone voter must come back as the leader of a later epoch (else no controller is active)."""
    ctx = RaftClientTestContext(0, {0})
    ctx.poll()
    ctx.client.schedule_append(1, ["a"])
    ctx.poll(2)
    ctx.client.resign(1)
    ctx.poll()
    assert ctx.quorum.is_resigned() and ctx.current_epoch() == 1
    # Appends to the resigned epoch can never commit.
    assert ctx.client.schedule_append(1, ["lost"]) == LONG_MAX
    ctx.sleep(2 * ctx.config.election_timeout_ms)
    ctx.poll(3)
    assert ctx.quorum.is_leader() and ctx.current_epoch() == 2
    assert ctx.listener.claimed == [1, 2]
    assert ctx.client.schedule_append(2, ["b"]) != LONG_MAX
    ctx.poll(3)
    assert ctx.listener.committed_records() == ["a", "b"]


def test_resign_of_an_epoch_already_over_does_nothing_and_a_follower_cannot_resign():
    ctx = RaftClientTestContext(0, {0})
    ctx.poll()
    ctx.client.resign(0)  # an older epoch: already over
    ctx.poll()
    assert ctx.quorum.is_leader() and ctx.current_epoch() == 1
    with pytest.raises(ValueError):
        ctx.client.resign(5)  # a later epoch than the current one
    follower = RaftClientTestContext(0, {0, 1, 2})
    follower.deliver_request(follower.begin_epoch_request(4, 1))
    follower.poll()
    with pytest.raises(ValueError):
        follower.client.resign(4)
    assert follower.quorum.is_follower() and follower.current_epoch() == 4


# ---- Vote ------------------------------------------------------------------------------------

def test_vote_granted_to_up_to_date_candidate_is_persisted():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    request = ctx.deliver_request(ctx.vote_request(epoch=2, candidate_id=1, last_epoch=0, last_offset=0))
    ctx.poll()
    response = partition(ctx.response_of(request))
    assert response.vote_granted and raft_util.error_of(response.error_code) is Errors.NONE
    assert ctx.quorum.is_voted() and ctx.current_epoch() == 2
    assert ctx.election() == ElectionState.with_voted_candidate(2, 1, {0, 1, 2})
    # The same candidate asking again gets the same answer; another one does not.
    again = ctx.deliver_request(ctx.vote_request(2, 1, 0, 0))
    other = ctx.deliver_request(ctx.vote_request(2, 2, 0, 0))
    ctx.poll(2)
    assert partition(ctx.response_of(again)).vote_granted
    assert not partition(ctx.response_of(other)).vote_granted
    assert ctx.election().voted_id() == 1


def test_vote_rejected_when_candidate_log_is_behind():
    log = MockLog(METADATA_PARTITION)
    log.append_simple(3, [b"a", b"b"])
    ctx = RaftClientTestContext(0, {0, 1, 2}, log=log)
    assert ctx.current_epoch() == 3  # taken from the log
    # Shorter log in the same last epoch, and an older last epoch with a longer log: both lose.
    shorter = ctx.deliver_request(ctx.vote_request(4, 1, last_epoch=3, last_offset=1))
    ctx.poll()
    assert not partition(ctx.response_of(shorter)).vote_granted
    assert ctx.quorum.is_unattached() and ctx.current_epoch() == 4
    older = ctx.deliver_request(ctx.vote_request(5, 2, last_epoch=2, last_offset=10))
    ctx.poll()
    assert not partition(ctx.response_of(older)).vote_granted
    assert not ctx.election().has_voted()


def test_vote_from_non_voter_is_inconsistent_voter_set_and_changes_nothing():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    before = ctx.election()
    request = ctx.deliver_request(ctx.vote_request(5, 9, 0, 0))
    ctx.poll()
    response = partition(ctx.response_of(request))
    assert raft_util.error_of(response.error_code) is Errors.INCONSISTENT_VOTER_SET
    assert not response.vote_granted
    assert ctx.election() == before and ctx.current_epoch() == 0


def test_vote_with_stale_epoch_is_fenced():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.deliver_request(ctx.begin_epoch_request(4, 1))
    ctx.poll()
    before = ctx.election()
    request = ctx.deliver_request(ctx.vote_request(3, 2, 0, 0))
    ctx.poll()
    response = partition(ctx.response_of(request))
    assert raft_util.error_of(response.error_code) is Errors.FENCED_LEADER_EPOCH
    assert response.leader_epoch == 4 and response.leader_id == 1
    assert ctx.election() == before


@pytest.mark.parametrize("last_epoch,last_offset", [(-1, 0), (0, -1), (5, 0)])
def test_vote_with_invalid_offsets_is_invalid_request(last_epoch, last_offset):
    ctx = RaftClientTestContext(0, {0, 1, 2})
    request = ctx.deliver_request(ctx.vote_request(5, 1, last_epoch, last_offset))
    ctx.poll()
    assert raft_util.error_of(partition(ctx.response_of(request)).error_code) is Errors.INVALID_REQUEST
    assert ctx.current_epoch() == 0


def test_vote_for_another_topic_partition_is_invalid_request():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    from kafka_py.clients.common.topic_partition import TopicPartition
    request = ctx.deliver_request(raft_util.vote_request_for(TopicPartition("other", 0), 5, 1, 0, 0))
    ctx.poll()
    response = ctx.response_of(request)
    assert raft_util.error_of(response.error_code) is Errors.INVALID_REQUEST and response.topics == ()


# ---- elections with three voters ------------------------------------------------------------

def test_candidate_wins_with_majority_and_sends_begin_epoch():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.sleep(2 * ctx.config.election_timeout_ms)
    ctx.poll(2)  # become candidate, then ask for votes
    assert ctx.quorum.is_candidate() and ctx.current_epoch() == 1
    votes = ctx.sent(raft_util.VoteRequestData)
    assert sorted(r.destination_id() for r in votes) == [1, 2]
    assert partition(votes[0].data()).replica_epoch == 1
    granted = raft_util.vote_response_for(Errors.NONE, METADATA_PARTITION, Errors.NONE, 1, -1, True)
    ctx.deliver_response(votes[0].correlation_id(), votes[0].destination_id(), granted)
    ctx.poll()
    assert ctx.quorum.is_leader()
    assert ctx.election() == ElectionState.with_elected_leader(1, 0, {0, 1, 2})
    ctx.poll()
    begins = ctx.sent(raft_util.BeginQuorumEpochRequestData)
    assert sorted(r.destination_id() for r in begins) == [1, 2]
    # A stale duplicate of the other vote response changes nothing.
    ctx.deliver_response(votes[1].correlation_id(), votes[1].destination_id(), granted)
    ctx.poll()
    assert ctx.quorum.is_leader() and ctx.current_epoch() == 1


def test_candidate_rejected_by_majority_backs_off_then_retries_higher_epoch():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.sleep(2 * ctx.config.election_timeout_ms)
    ctx.poll(2)  # become candidate, then ask for votes
    rejected = raft_util.vote_response_for(Errors.NONE, METADATA_PARTITION, Errors.NONE, 1, -1, False)
    for request in ctx.sent(raft_util.VoteRequestData):
        ctx.deliver_response(request.correlation_id(), request.destination_id(), rejected)
    ctx.poll(2)
    state = ctx.quorum.candidate_state_or_throw()
    assert state.is_vote_rejected() and state.is_backing_off()
    ctx.sleep(ctx.config.election_backoff_max_ms)
    ctx.poll()
    assert ctx.quorum.is_candidate() and ctx.current_epoch() == 2
    assert ctx.quorum.candidate_state_or_throw().retries() == 2


def test_vote_response_with_higher_epoch_makes_candidate_follow():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.sleep(2 * ctx.config.election_timeout_ms)
    ctx.poll(2)  # become candidate, then ask for votes
    request = ctx.sent(raft_util.VoteRequestData)[0]
    ctx.deliver_response(request.correlation_id(), request.destination_id(),
                         raft_util.vote_response_for(Errors.NONE, METADATA_PARTITION, Errors.NONE, 5, 2, False))
    ctx.poll()
    assert ctx.quorum.is_follower() and ctx.current_epoch() == 5 and ctx.quorum.leader_id() == 2


# ---- BeginQuorumEpoch / EndQuorumEpoch ------------------------------------------------------

def test_begin_quorum_epoch_makes_follower():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    request = ctx.deliver_request(ctx.begin_epoch_request(3, 1))
    ctx.poll()
    assert raft_util.error_of(partition(ctx.response_of(request)).error_code) is Errors.NONE
    assert ctx.quorum.is_follower() and ctx.quorum.leader_id() == 1
    assert ctx.election() == ElectionState.with_elected_leader(3, 1, {0, 1, 2})


def test_begin_quorum_epoch_from_non_voter_or_stale_epoch_changes_nothing():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.deliver_request(ctx.begin_epoch_request(3, 1))
    ctx.poll()
    before = ctx.election()
    foreign = ctx.deliver_request(ctx.begin_epoch_request(4, 7))
    stale = ctx.deliver_request(ctx.begin_epoch_request(2, 2))
    ctx.poll(2)
    assert raft_util.error_of(partition(ctx.response_of(foreign)).error_code) is Errors.INCONSISTENT_VOTER_SET
    assert raft_util.error_of(partition(ctx.response_of(stale)).error_code) is Errors.FENCED_LEADER_EPOCH
    assert ctx.election() == before and ctx.quorum.leader_id() == 1


def test_end_quorum_epoch_starts_election_by_successor_rank():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.deliver_request(ctx.begin_epoch_request(3, 1))
    ctx.poll()
    ctx.deliver_request(ctx.end_epoch_request(3, 1, [0, 2]))
    ctx.poll()
    # First in the list: it stands at once.
    ctx.poll()
    assert ctx.quorum.is_candidate() and ctx.current_epoch() == 4

    second = RaftClientTestContext(2, {0, 1, 2})
    second.deliver_request(second.begin_epoch_request(3, 1))
    second.poll()
    second.deliver_request(second.end_epoch_request(3, 1, [0, 2]))
    second.poll()
    second.poll()
    assert second.quorum.is_follower()  # waits its turn
    second.sleep(second.config.election_backoff_max_ms)
    second.poll()
    assert second.quorum.is_candidate()


# ---- the follower's fetch ---------------------------------------------------------------------

def test_follower_truncates_on_diverging_epoch_then_catches_up():
    log = MockLog(METADATA_PARTITION)
    log.append_simple(1, [b"a", b"b"])
    log.append_simple(2, [b"x", b"y"])  # never committed; the new leader does not have it
    ctx = RaftClientTestContext(0, {0, 1, 2}, log=log)
    ctx.deliver_request(ctx.begin_epoch_request(3, 1))
    ctx.poll(2)
    (fetch,) = ctx.sent(raft_util.FetchRequestData)
    fp = fetch.data().topics[0].partitions[0]
    assert (fp.fetch_offset, fp.last_fetched_epoch, fp.current_leader_epoch) == (4, 2, 3)
    assert fetch.data().cluster_id == CLUSTER_ID and fetch.destination_id() == 1

    ctx.deliver_response(fetch.correlation_id(), 1,
                         ctx.fetch_response(3, 1, b"", high_watermark=-1, diverging=OffsetAndEpoch(2, 1)))
    ctx.poll()
    assert ctx.log.end_offset().offset == 2 and ctx.log.last_fetched_epoch() == 1

    ctx.poll()
    (fetch,) = ctx.sent(raft_util.FetchRequestData)
    fp = fetch.data().topics[0].partitions[0]
    assert (fp.fetch_offset, fp.last_fetched_epoch) == (2, 1)
    ctx.deliver_response(fetch.correlation_id(), 1,
                         ctx.fetch_response(3, 1, data_batch(2, 3, ["c", "d"]), high_watermark=4))
    ctx.poll(2)
    assert [e[2] for e in ctx.log.entries()] == [b"a", b"b", b"c", b"d"]
    assert ctx.client.high_watermark() == 4
    assert ctx.listener.committed_records() == ["a", "b", "c", "d"]


def test_follower_high_watermark_is_capped_at_its_log_end():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.deliver_request(ctx.begin_epoch_request(3, 1))
    ctx.poll(2)
    (fetch,) = ctx.sent(raft_util.FetchRequestData)
    ctx.deliver_response(fetch.correlation_id(), 1, ctx.fetch_response(3, 1, data_batch(0, 3, ["a"]), 10))
    ctx.poll()
    assert ctx.client.high_watermark() == 1


def test_follower_becomes_candidate_after_fetch_timeout():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.deliver_request(ctx.begin_epoch_request(3, 1))
    ctx.poll()
    ctx.sleep(ctx.config.fetch_timeout_ms)
    ctx.poll()
    assert ctx.quorum.is_candidate() and ctx.current_epoch() == 4


# ---- the leader -------------------------------------------------------------------------------

def test_leader_advances_high_watermark_from_follower_fetches_and_delivers_commits():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.become_leader()
    epoch = ctx.current_epoch()
    ctx.poll()
    assert ctx.client.high_watermark() is None  # no majority at the epoch start yet
    ctx.client.schedule_append(epoch, ["m", "n"])
    ctx.poll()
    end = ctx.log.end_offset().offset
    assert end == 3

    request = ctx.deliver_request(ctx.fetch_request(epoch, 1, fetch_offset=0, last_fetched_epoch=0))
    ctx.poll()
    response = fetch_partition(ctx.response_of(request))
    assert raft_util.error_of(response.error_code) is Errors.NONE
    assert len(response.records) > 0 and response.high_watermark == -1
    request = ctx.deliver_request(ctx.fetch_request(epoch, 1, fetch_offset=end, last_fetched_epoch=epoch))
    ctx.poll()
    assert fetch_partition(ctx.response_of(request)).high_watermark == end
    assert ctx.client.high_watermark() == end
    ctx.poll()
    assert ctx.listener.committed_records() == ["m", "n"]
    assert ctx.listener.claimed == [epoch]

    describe = ctx.deliver_request(raft_util.describe_quorum_request_for(METADATA_PARTITION))
    ctx.poll()
    d = partition(ctx.response_of(describe))
    assert (d.leader_id, d.leader_epoch, d.high_watermark) == (0, epoch, end)
    assert {(v.replica_id, v.log_end_offset) for v in d.current_voters} == {(0, end), (1, end), (2, -1)}


def test_leader_answers_diverging_fetch():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.become_leader()
    epoch = ctx.current_epoch()
    request = ctx.deliver_request(ctx.fetch_request(epoch, 1, fetch_offset=5, last_fetched_epoch=epoch - 1))
    ctx.poll()
    response = fetch_partition(ctx.response_of(request))
    assert response.diverging_epoch.epoch == 0 and response.diverging_epoch.end_offset == 0
    assert len(response.records or b"") == 0


def test_fetch_with_wrong_cluster_id_is_rejected_and_changes_nothing():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.become_leader()
    epoch = ctx.current_epoch()
    request = ctx.deliver_request(ctx.fetch_request(epoch, 1, 1, epoch, cluster_id="someone-else"))
    ctx.poll()
    response = ctx.response_of(request)
    assert raft_util.error_of(response.error_code) is Errors.INCONSISTENT_CLUSTER_ID
    assert response.responses == ()
    assert ctx.quorum.leader_state_or_throw().get_voter_end_offsets()[1] == -1


def test_fetch_with_stale_or_future_epoch():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.become_leader()
    epoch = ctx.current_epoch()
    stale = ctx.deliver_request(ctx.fetch_request(epoch - 1, 1, 0, 0))
    future = ctx.deliver_request(ctx.fetch_request(epoch + 1, 1, 0, 0))
    bad = ctx.deliver_request(ctx.fetch_request(epoch, 1, 0, epoch + 1))
    ctx.poll(3)
    assert raft_util.error_of(fetch_partition(ctx.response_of(stale)).error_code) is Errors.FENCED_LEADER_EPOCH
    assert raft_util.error_of(fetch_partition(ctx.response_of(future)).error_code) is Errors.UNKNOWN_LEADER_EPOCH
    assert raft_util.error_of(fetch_partition(ctx.response_of(bad)).error_code) is Errors.INVALID_REQUEST
    assert ctx.quorum.is_leader() and ctx.current_epoch() == epoch


def test_parked_fetch_is_answered_when_data_arrives_or_wait_expires():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.become_leader()
    epoch = ctx.current_epoch()
    end = ctx.log.end_offset().offset
    request = ctx.deliver_request(ctx.fetch_request(epoch, 1, end, epoch, max_wait_ms=500))
    ctx.poll()
    assert not request.completion.is_done()
    ctx.client.schedule_append(epoch, ["late"])
    ctx.poll_until_quiet()
    assert request.completion.is_done()
    assert len(fetch_partition(ctx.response_of(request)).records) > 0

    end = ctx.log.end_offset().offset
    idle = ctx.deliver_request(ctx.fetch_request(epoch, 2, end, epoch, max_wait_ms=500))
    ctx.poll()
    assert not idle.completion.is_done()
    ctx.sleep(500)
    ctx.poll_until_quiet()
    response = fetch_partition(ctx.response_of(idle))
    assert raft_util.error_of(response.error_code) is Errors.NONE and len(response.records or b"") == 0


def test_graceful_shutdown_of_leader_resigns_with_end_quorum_epoch():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    ctx.become_leader()
    epoch = ctx.current_epoch()
    future = ctx.client.shutdown(5_000)
    ctx.poll()
    assert ctx.quorum.is_resigned()
    ctx.poll()
    ends = ctx.sent(raft_util.EndQuorumEpochRequestData)
    assert sorted(r.destination_id() for r in ends) == [1, 2]
    # Once another leader is known the shutdown completes.
    request = ctx.deliver_request(ctx.begin_epoch_request(epoch + 1, 1))
    ctx.poll(2)
    assert future.is_done() and not future.is_completed_exceptionally()
    assert not ctx.client.is_running()


def test_graceful_shutdown_times_out():
    ctx = RaftClientTestContext(0, {0, 1, 2})
    future = ctx.client.shutdown(1_000)
    ctx.poll()
    ctx.sleep(1_000)
    ctx.poll()
    assert future.is_completed_exceptionally()


def test_observer_discovers_leader_through_fetch():
    ctx = RaftClientTestContext(None, {1, 2, 3})
    ctx.poll()
    (fetch,) = ctx.sent(raft_util.FetchRequestData)
    assert fetch.data().replica_id == -1
    ctx.deliver_response(fetch.correlation_id(), fetch.destination_id(),
                         ctx.fetch_response(2, 1, b"", 0, error=Errors.NOT_LEADER_OR_FOLLOWER))
    ctx.poll()
    assert ctx.quorum.is_follower() and ctx.quorum.leader_id() == 1
    vote = ctx.deliver_request(ctx.vote_request(3, 2, 0, 0))
    ctx.poll()
    assert raft_util.error_of(partition(ctx.response_of(vote)).error_code) is Errors.INCONSISTENT_VOTER_SET


# ---- snapshots (KIP-630) ----------------------------------------------------------------------

def _pump(leader, follower, rounds):
    """Carry the follower's requests to the leader and the answers back, ``rounds`` times."""
    for _ in range(rounds):
        follower.poll()
        for request in follower.channel.drain_send_queue():
            inbound = leader.deliver_request(request.data())
            leader.poll_until_quiet()
            follower.deliver_response(request.correlation_id(), request.destination_id(), leader.response_of(inbound))
        leader.poll()


def test_new_observer_catches_up_through_a_chunked_snapshot(monkeypatch):
    from kafka_py.raft import kafka_raft_client
    from kafka_py.raft.internals.string_serde import StringSerde
    from kafka_py.clients.common.record.compression import CompressionType
    from kafka_py.raft.snapshot.snapshot_writer import SnapshotWriter

    leader = RaftClientTestContext(0, {0})
    leader.poll()
    for i in range(10):
        leader.client.schedule_append(1, [f"v{i}a", f"v{i}b"])
        leader.poll(2)
    committed = leader.client.high_watermark()
    assert committed == 21
    # The state machine writes a snapshot of its state at the high watermark...
    writer = leader.client.create_snapshot(committed - 1, 1, 0)
    writer.append([f"v{i}{s}" for i in range(10) for s in "ab"])
    writer.freeze()
    writer.close()
    snapshot_id = OffsetAndEpoch(committed, 1)
    assert leader.log.latest_snapshot_id() == snapshot_id
    # ...and the log drops what the snapshot covers.
    assert leader.log.delete_before_snapshot(snapshot_id)
    assert leader.log.start_offset() == committed
    leader.client.schedule_append(1, ["after"])
    leader.poll(2)

    # Chunks far smaller than the snapshot, so it takes several FetchSnapshot round trips.
    monkeypatch.setattr(kafka_raft_client, "MAX_FETCH_SIZE_BYTES", 64)
    observer = RaftClientTestContext(None, {0})
    sizes_asked = []
    original = observer.client._build_fetch_snapshot_request

    def recording(snapshot, size):
        sizes_asked.append(size)
        return original(snapshot, size)

    observer.client._build_fetch_snapshot_request = recording
    _pump(leader, observer, 40)

    assert len(sizes_asked) > 2 and sizes_asked == sorted(sizes_asked)
    assert observer.log.latest_snapshot_id() == snapshot_id
    assert observer.log.start_offset() == committed
    assert observer.listener.snapshot_ids == [snapshot_id]
    # the snapshot's records, then what was written after it
    assert observer.listener.committed_records()[-1] == "after"
    assert observer.listener.committed_records()[:20] == [f"v{i}{s}" for i in range(10) for s in "ab"]
    assert observer.client.high_watermark() == leader.client.high_watermark()
    assert observer.log.entries()[-1][2] == b"after"


def test_fetch_snapshot_errors():
    leader = RaftClientTestContext(0, {0})
    leader.poll()
    missing = raft_util.singleton_fetch_snapshot_request(CLUSTER_ID, METADATA_PARTITION, 5, 1, OffsetAndEpoch(9, 1),
                                                         0, 100)
    request = leader.deliver_request(missing)
    leader.poll()
    assert raft_util.error_of(partition(leader.response_of(request)).error_code) is Errors.SNAPSHOT_NOT_FOUND
    stale = raft_util.singleton_fetch_snapshot_request(CLUSTER_ID, METADATA_PARTITION, 5, 0, OffsetAndEpoch(9, 1),
                                                       0, 100)
    request = leader.deliver_request(stale)
    leader.poll()
    assert raft_util.error_of(partition(leader.response_of(request)).error_code) is Errors.FENCED_LEADER_EPOCH
    leader.client.schedule_append(1, ["a"])
    leader.poll(2)
    writer = leader.client.create_snapshot(leader.client.high_watermark() - 1, 1, 0)
    writer.append(["a"])
    writer.freeze()
    writer.close()
    snapshot_id = leader.log.latest_snapshot_id()
    size = leader.log.read_snapshot(snapshot_id).size_in_bytes()
    beyond = raft_util.singleton_fetch_snapshot_request(CLUSTER_ID, METADATA_PARTITION, 5, 1, snapshot_id, size, 100)
    request = leader.deliver_request(beyond)
    leader.poll()
    assert raft_util.error_of(partition(leader.response_of(request)).error_code) is Errors.POSITION_OUT_OF_RANGE
    first = raft_util.singleton_fetch_snapshot_request(CLUSTER_ID, METADATA_PARTITION, 5, 1, snapshot_id, 0, 10)
    request = leader.deliver_request(first)
    leader.poll()
    answer = partition(leader.response_of(request))
    assert raft_util.error_of(answer.error_code) is Errors.NONE
    assert (answer.size, answer.position, len(answer.unaligned_records)) == (size, 0, 10)
