"""Three KRaft controller processes (process.roles=controller), formatted with
bin/kafka-storage.sh and started with bin/kafka-server-start.sh, running a real Raft quorum
over sockets: one leader (asked with DescribeQuorum over the wire), a new one elected after
the leader is killed -9, the old leader back as a follower with the leader's log end; a node
with an unformatted dir refusing to start; a Vote from a non-voter and a Fetch with another
cluster's id answered with Kafka's errors while the quorum serves on."""
from __future__ import annotations

import datetime

import pytest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.raft import raft_util
from kafka_py.core.raft.kafka_metadata_log import METADATA_PARTITION
from tests.integration.broker_harness import free_port, wait_until
from tests.integration.kraft_harness import KRaftControllerProcess, KRaftQuorum

ELECTION_TIMEOUT_MS = 1000
# A new leader is due within the election timeout (plus the fetch timeout a follower waits
# before it stands); the slack covers process scheduling on a loaded machine.
ELECTION_WAIT_S = (ELECTION_TIMEOUT_MS + 2000) / 1000 + 30


@pytest.fixture
def quorum(tmp_path):
    q = KRaftQuorum(tmp_path)
    q.format()
    q.start()
    yield q
    q.stop()


def test_leader_killed_a_new_one_is_elected_and_the_old_one_rejoins(quorum):
    leader_id, epoch, voters = quorum.wait_for_leader(ELECTION_WAIT_S)
    assert sorted(voters) == [1, 2, 3]
    # The other two answer DescribeQuorum only as non-leaders.
    assert [v[0] for v in quorum.leaders()] == [leader_id]
    # The leader's log holds at least its epoch's leader change; every voter catches up to it.
    wait_until(lambda: len(set((quorum.node(leader_id).quorum_view() or (0, 0, {}))[2].values())) == 1, 30,
               "voters did not catch up with the leader")

    old_leader = quorum.node(leader_id)
    old_leader.kill()
    new_leader_id, new_epoch, _ = quorum.wait_for_leader(ELECTION_WAIT_S, min_epoch=epoch + 1)
    assert new_leader_id != leader_id and new_epoch > epoch

    old_leader.start()
    new_leader = quorum.node(new_leader_id)

    def rejoined() -> bool:
        view = new_leader.quorum_view()
        if view is None or view[1] != new_epoch:
            return False
        ends = view[2]
        return ends.get(leader_id, -1) == ends[new_leader_id] >= 0

    wait_until(rejoined, 60, "the restarted node did not catch up as a follower:\n" + old_leader.tail())
    # It follows: it does not claim the leadership, and the leader and epoch did not change.
    assert old_leader.quorum_view() is None
    assert quorum.wait_for_leader(10)[:2] == (new_leader_id, new_epoch)


def test_unformatted_controller_refuses_to_start(tmp_path):
    port = free_port()
    node = KRaftControllerProcess(tmp_path / "unformatted", 1, port, f"1@127.0.0.1:{port}")
    node.start(wait=False)
    code = node.wait_exit(120)
    assert code == 1
    output = node.output()
    assert "No `meta.properties` found in" in output and str(node.log_dir) in output
    assert "kafka-storage.sh" in output


def test_non_voter_vote_and_wrong_cluster_fetch_are_refused(quorum):
    leader_id, epoch, _ = quorum.wait_for_leader(ELECTION_WAIT_S)
    leader = quorum.node(leader_id)
    follower = next(n for n in quorum.nodes if n.node_id != leader_id)

    for node in (leader, follower):
        # A candidate of a later epoch that is not a voter: refused before any epoch change.
        vote = raft_util.vote_request_for(METADATA_PARTITION, epoch + 1, 99, 0, 0)
        response = node.request(ApiKeys.VOTE, 0, vote)
        assert int(response.error_code) == Errors.NONE.error_code
        partition = response.topics[0].partitions[0]
        assert int(partition.error_code) == Errors.INCONSISTENT_VOTER_SET.error_code
        assert not partition.vote_granted

    fetch = raft_util.singleton_fetch_request(METADATA_PARTITION, current_leader_epoch=epoch, fetch_offset=0,
                                              last_fetched_epoch=0, replica_id=-1, max_wait_ms=0,
                                              max_bytes=1024, cluster_id="AAAAAAAAAAAAAAAAAAAAAA")
    response = leader.request(ApiKeys.FETCH, 12, fetch)
    assert int(response.error_code) == Errors.INCONSISTENT_CLUSTER_ID.error_code
    assert not response.responses

    # The same Fetch from this cluster is served.
    cluster_fetch = raft_util.singleton_fetch_request(METADATA_PARTITION, current_leader_epoch=epoch, fetch_offset=0,
                                                      last_fetched_epoch=0, replica_id=-1, max_wait_ms=0,
                                                      max_bytes=1024 * 1024, cluster_id=quorum.cluster_id)
    response = leader.request(ApiKeys.FETCH, 12, cluster_fetch)
    assert int(response.error_code) == Errors.NONE.error_code
    assert len(response.responses[0].partitions[0].records or b"") > 0

    # The quorum serves on: same leader, same epoch, every voter still caught up.
    assert quorum.wait_for_leader(10)[:2] == (leader_id, epoch)
    assert all(node.running for node in quorum.nodes)


def test_controller_listener_serves_only_controller_apis(quorum):
    leader_id, _, _ = quorum.wait_for_leader(ELECTION_WAIT_S)
    node = quorum.node(leader_id)
    from kafka_py.clients.common.protocol.entities import build_entity
    from kafka_py.clients.common.protocol.messages import request_schema
    from tests.integration.broker_harness import RawClient

    request = build_entity(request_schema(ApiKeys.API_VERSIONS, 3),
                           {"client_software_name": "test", "client_software_version": "1"})
    response = node.request(ApiKeys.API_VERSIONS, 3, request)
    served = {int(k.api_key) for k in response.api_keys}
    assert {ApiKeys.VOTE.id, ApiKeys.FETCH.id, ApiKeys.BROKER_REGISTRATION.id, ApiKeys.ENVELOPE.id} <= served
    assert ApiKeys.PRODUCE.id not in served

    # A Produce on the controller listener is not served: the connection is closed.
    produce = build_entity(request_schema(ApiKeys.PRODUCE, 8), {
        "acks": 1, "timeout": datetime.timedelta(seconds=1), "topic_data": []})
    with RawClient(node.port, timeout=10) as client:
        client.send(ApiKeys.PRODUCE, 8, produce)
        assert client.closed_by_broker()
    assert quorum.wait_for_leader(10)[0] == leader_id
