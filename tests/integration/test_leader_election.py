"""Preferred and unclean leader elections on a three-broker cluster (automatic rebalancing
off, so that only the elections asked for move leaders): bin/kafka-leader-election.sh and
kafka-python's ``elect_leaders`` after a broker restart, an unclean election of a partition
whose ISR is gone, the deprecated bin/kafka-preferred-replica-election.sh --zookeeper path
(/admin/preferred_replica_election), and bad requests answered with Kafka's codes."""
from __future__ import annotations

import json
import subprocess
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaProducer

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from tests.integration.broker_harness import ROOT, RawClient, unique_chroot, wait_until
from tests.integration.replicated_cluster import WAIT, make_replicated_cluster

TOPIC = "elect"
# partition p prefers broker p
ASSIGNMENT = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}
PREFERRED = {p: replicas[0] for p, replicas in ASSIGNMENT.items()}


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    from tests.integration.broker_harness import BrokerProcess
    from tests.integration.replicated_cluster import CLUSTER_PROPS, ReplicatedCluster

    chroot = unique_chroot("leader-election")
    brokers = [BrokerProcess(tmp_path_factory.mktemp(f"le-broker{i}-"), zookeeper.connect_string, chroot, i,
                             overrides=dict(CLUSTER_PROPS)) for i in range(3)]
    c = ReplicatedCluster(brokers).start()
    c.create_topic(TOPIC, ASSIGNMENT)
    c.wait_fully_replicated(TOPIC, len(ASSIGNMENT))
    yield c
    for b in brokers:
        if b.running:
            b.stop()
    c.close()


def run_tool(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / script), *args], capture_output=True, text=True, timeout=180)


def restart_follower_of_its_own_partition(cluster) -> int:
    """Restart a broker other than the controller (cleanly: its leadership moves to another
    in-sync replica); returns its id once it is back in every ISR. The partition it prefers is
    then led by another broker."""
    controller = cluster.wait_controller()
    broker_id = next(i for i in (1, 2, 0) if i != controller)
    broker = cluster.broker(broker_id)
    assert broker.stop() == 0, broker.tail()
    cluster.wait_state(TOPIC, lambda s: s["leader"] not in (-1, broker_id), "leadership moved at shutdown",
                       partition=broker_id)
    broker.start()
    cluster.wait_fully_replicated(TOPIC, len(ASSIGNMENT))
    assert cluster.leaders(TOPIC, len(ASSIGNMENT))[broker_id] != broker_id
    return broker_id


def leader_epochs(cluster, topic: str, partitions) -> dict[int, int]:
    return {p: cluster.state(topic, p)["leader_epoch"] for p in partitions}


def test_the_leader_election_tool_gives_a_restarted_broker_its_preferred_leadership_back(cluster, tmp_path):
    restarted = restart_follower_of_its_own_partition(cluster)

    result = run_tool("kafka-leader-election.sh", "--bootstrap-server", ",".join(cluster.bootstrap()),
                      "--election-type", "preferred", "--all-topic-partitions")
    assert result.returncode == 0, result.stdout + result.stderr
    # only the partitions that needed an election are listed (here: just the restarted broker's)
    assert result.stdout == f"Successfully completed leader election (PREFERRED) for partitions {TOPIC}-{restarted}\n"
    assert cluster.leaders(TOPIC, len(ASSIGNMENT)) == PREFERRED

    again = run_tool("kafka-leader-election.sh", "--bootstrap-server", ",".join(cluster.bootstrap()),
                     "--election-type", "PREFERRED", "--topic", TOPIC, "--partition", str(restarted))
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout == f"Valid replica already elected for partitions {TOPIC}-{restarted}\n"

    # the deprecated tool's admin path, with its own wording
    json_file = tmp_path / "election.json"
    json_file.write_text(json.dumps({"partitions": [{"topic": TOPIC, "partition": restarted}]}))
    deprecated = run_tool("kafka-preferred-replica-election.sh", "--bootstrap-server", ",".join(cluster.bootstrap()),
                          "--path-to-json-file", str(json_file))
    assert deprecated.returncode == 0, deprecated.stdout + deprecated.stderr
    assert deprecated.stdout.splitlines()[1:] == [f"Preferred replica already elected for partitions {TOPIC}-{restarted}"]


def test_kafka_python_elect_leaders_moves_only_the_partition_off_its_preferred_leader(cluster):
    restarted = restart_follower_of_its_own_partition(cluster)
    epochs = leader_epochs(cluster, TOPIC, ASSIGNMENT)
    # The restarted broker's partition, and any other whose leader moved meanwhile (a broker
    # of a loaded machine can miss a ZooKeeper session and lose its leaderships for a while)
    off_preferred = {p for p, leader in cluster.leaders(TOPIC, len(ASSIGNMENT)).items() if leader != PREFERRED[p]}
    assert restarted in off_preferred

    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap(), request_timeout_ms=60000)
    try:
        response = admin.elect_leaders(0, {TOPIC: list(ASSIGNMENT)}, timeout_ms=30000)
    finally:
        admin.close()
    assert Errors.for_code(response.error_code) is Errors.NONE
    answers = {(r.topic, p.partition_id): (Errors.for_code(p.error_code), p.error_message)
               for r in response.replica_election_results for p in r.partition_result}
    assert answers == {(TOPIC, p): ((Errors.NONE, None) if p in off_preferred else (Errors.ELECTION_NOT_NEEDED, None))
                       for p in ASSIGNMENT}
    assert cluster.leaders(TOPIC, len(ASSIGNMENT)) == PREFERRED
    after = leader_epochs(cluster, TOPIC, ASSIGNMENT)
    assert {p for p in ASSIGNMENT if after[p] != epochs[p]} == off_preferred


def test_unclean_election_of_a_partition_whose_isr_is_gone_then_the_zookeeper_path_restores_the_preferred(
        cluster, tmp_path):
    controller = cluster.wait_controller()
    first, second = [i for i in range(3) if i != controller]
    topic = f"unclean-{uuid.uuid4().hex[:6]}"
    cluster.create_topic(topic, {0: [first, second]})
    cluster.wait_state(topic, lambda s: sorted(s["isr"]) == sorted([first, second]), "both replicas in sync")
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), acks="all", retries=5)
    try:
        for i in range(5):
            producer.send(topic, b"before-%d" % i).get(timeout=60)
    finally:
        producer.close()

    # The follower goes (out of the ISR), then the leader dies: the ISR is only the dead leader.
    assert cluster.broker(second).stop() == 0
    cluster.wait_state(topic, lambda s: s["isr"] == [first], "the stopped follower left the ISR")
    cluster.broker(first).kill()
    cluster.wait_state(topic, lambda s: s["leader"] == -1 and s["isr"] == [first], "no leader left")
    cluster.broker(second).start()
    # unclean.leader.election.enable is false: the live, out-of-sync replica does not lead
    assert cluster.state(topic)["leader"] == -1
    bootstrap = ",".join(cluster.bootstrap())

    # the preferred replica is dead: a preferred election has nobody to elect
    preferred = run_tool("kafka-leader-election.sh", "--bootstrap-server", bootstrap, "--election-type", "preferred",
                         "--topic", topic, "--partition", "0")
    assert preferred.returncode == 1
    assert preferred.stdout.startswith(f"Error completing leader election (PREFERRED) for partition: {topic}-0: "
                                       "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: ")
    assert preferred.stderr == "1 replica(s) could not be elected\n"
    assert cluster.state(topic)["leader"] == -1

    unclean = run_tool("kafka-leader-election.sh", "--bootstrap-server", bootstrap, "--election-type", "unclean",
                       "--topic", topic, "--partition", "0")
    assert unclean.returncode == 0, unclean.stdout + unclean.stderr
    assert unclean.stdout == f"Successfully completed leader election (UNCLEAN) for partitions {topic}-0\n"
    state = cluster.state(topic)
    assert state["leader"] == second and state["isr"] == [second]

    # The old leader comes back as a follower of the new one; the deprecated tool's ZooKeeper
    # path then gives every preferred replica its leadership back (no JSON file: all partitions).
    cluster.broker(first).restart()
    cluster.wait_state(topic, lambda s: sorted(s["isr"]) == sorted([first, second]), "the old leader caught up")
    cluster.wait_fully_replicated(TOPIC, len(ASSIGNMENT))
    zk = run_tool("kafka-preferred-replica-election.sh", "--zookeeper", cluster.broker(0).zk_connect)
    assert zk.returncode == 0, zk.stdout + zk.stderr
    everything = ", ".join([f"{TOPIC}-{p}" for p in ASSIGNMENT] + [f"{topic}-0"])
    assert zk.stdout.splitlines() == [
        "This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405",
        "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.",
        "Use --bootstrap-server instead to specify a broker to connect to.",
        f"Created preferred replica election path with {everything.replace(', ', ',')}",
        f"Successfully started preferred replica election for partitions Set({everything})"]
    cluster.wait_state(topic, lambda s: s["leader"] == first, "the controller elected the preferred replica")
    wait_until(lambda: cluster.leaders(TOPIC, len(ASSIGNMENT)) == PREFERRED, WAIT,
               f"{TOPIC}'s preferred leaders elected: {cluster.leaders(TOPIC, len(ASSIGNMENT))}")
    wait_until(lambda: not cluster.zk.exists("/admin/preferred_replica_election"), WAIT,
               "the controller deletes /admin/preferred_replica_election when done")

    # a file naming a partition that does not exist: skipped, and said so
    json_file = tmp_path / "partitions.json"
    json_file.write_text(json.dumps({"partitions": [{"topic": topic, "partition": 0},
                                                    {"topic": topic, "partition": 5}]}))
    again = run_tool("kafka-preferred-replica-election.sh", "--zookeeper", cluster.broker(0).zk_connect,
                     "--path-to-json-file", str(json_file))
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.splitlines()[-1] == (f"Skipping preferred replica leader election for partition {topic}-5 "
                                             "since it doesn't exist.")
    wait_until(lambda: not cluster.zk.exists("/admin/preferred_replica_election"), WAIT,
               "the controller deletes /admin/preferred_replica_election when done")


def elect_raw(port: int, version: int, partitions: dict[str, list[int]] | None, election_type: int = 0):
    values = {"timeout": 10000, "topic_partitions": None if partitions is None else [
        {"topic": t, "partitions": ps} for t, ps in partitions.items()]}
    if version >= 1:
        values["election_type"] = election_type
    with RawClient(port, timeout=30) as client:
        response = client.request(ApiKeys.ELECT_LEADERS, version,
                                  build_entity(request_schema(ApiKeys.ELECT_LEADERS, version), values))
    answers = {(r.topic, int(p.partition_id)): Errors.for_code(p.error_code)
               for r in response.replica_election_results for p in r.partition_result}
    top = Errors.for_code(response.error_code) if version >= 1 else None
    return top, answers


def test_bad_elections_get_kafkas_errors_and_change_nothing(cluster):
    cluster.wait_fully_replicated(TOPIC, len(ASSIGNMENT))
    if cluster.leaders(TOPIC, len(ASSIGNMENT)) != PREFERRED:
        result = run_tool("kafka-leader-election.sh", "--bootstrap-server", ",".join(cluster.bootstrap()),
                          "--election-type", "preferred", "--all-topic-partitions")
        assert result.returncode == 0, result.stdout + result.stderr
    assert cluster.leaders(TOPIC, len(ASSIGNMENT)) == PREFERRED
    epochs = leader_epochs(cluster, TOPIC, ASSIGNMENT)
    controller = cluster.broker(cluster.wait_controller())
    other = cluster.broker(next(i for i in range(3) if i != controller.broker_id))

    # unknown topics and partitions, through kafka-python and the tool
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap(), request_timeout_ms=60000)
    try:
        response = admin.elect_leaders(0, {"no-such-topic": [0], TOPIC: [0, 7]}, timeout_ms=30000, raise_errors=False)
    finally:
        admin.close()
    answers = {(r.topic, p.partition_id): (Errors.for_code(p.error_code), p.error_message)
               for r in response.replica_election_results for p in r.partition_result}
    gone = (Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
    assert answers == {("no-such-topic", 0): gone, (TOPIC, 7): gone, (TOPIC, 0): (Errors.ELECTION_NOT_NEEDED, None)}
    tool = run_tool("kafka-leader-election.sh", "--bootstrap-server", controller.bootstrap, "--election-type",
                    "unclean", "--topic", "no-such-topic", "--partition", "3")
    assert tool.returncode == 1
    assert tool.stdout == ("Error completing leader election (UNCLEAN) for partition: no-such-topic-3: "
                           "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
                           "The partition does not exist.\n")

    # an election type that does not exist: INVALID_REQUEST for the request and each partition
    for version, election_type in ((1, 2), (2, -1)):
        top, answers = elect_raw(controller.port, version, {TOPIC: [0, 1]}, election_type)
        assert top is Errors.INVALID_REQUEST
        assert answers == {(TOPIC, 0): Errors.INVALID_REQUEST, (TOPIC, 1): Errors.INVALID_REQUEST}

    # v0 has no election type: preferred; a broker that is not the controller says so
    assert elect_raw(controller.port, 0, {TOPIC: [2]}) == (None, {(TOPIC, 2): Errors.ELECTION_NOT_NEEDED})
    assert elect_raw(other.port, 2, {TOPIC: [2]}) == (Errors.NONE, {(TOPIC, 2): Errors.NOT_CONTROLLER})
    # all partitions (null), nothing to elect: an empty answer
    assert elect_raw(controller.port, 2, None) == (Errors.NONE, {})

    assert cluster.leaders(TOPIC, len(ASSIGNMENT)) == PREFERRED
    assert leader_epochs(cluster, TOPIC, ASSIGNMENT) == epochs
    # the JSON file the tool refuses before asking anyone
    bad = run_tool("kafka-leader-election.sh", "--bootstrap-server", controller.bootstrap, "--election-type",
                   "preferred", "--path-to-json-file", "/dev/null")
    assert bad.returncode == 1 and bad.stderr == "Replica election data is empty\n"
