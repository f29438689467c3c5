"""Partition reassignment on a four-broker cluster: kafka-python's ``alter_partition_reassignments``
and ``list_partition_reassignments``, bin/kafka-reassign-partitions.sh, replication throttles,
and the controller killed while a reassignment is under way.

Broker 3 starts first, so it is the controller until the last test kills it. Topics start on
brokers [0, 1, 2] and move to [1, 2, 3]: the new replica on broker 3 catches up and joins the
ISR, the leader (broker 0, the first replica) hands over, and broker 0's replica is deleted.
``replica.fetch.max.bytes`` is 16 KiB, so that a throttled replica needs many fetches to catch
up and a throttled move stays under way while a test looks at it. Every wait is bounded and
nothing is timed.
"""
from __future__ import annotations

import json
import subprocess
import time

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka import TopicPartition as KTP
from kafka.errors import (InvalidReplicationAssignmentError, KafkaError, NoReassignmentInProgressError,
                          UnknownTopicOrPartitionError)

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.core.utils.command_line_utils import (BROKER_RESOURCE, OP_DELETE, OP_SET, TOPIC_RESOURCE, CommandError,
                                               incremental_alter_configs)
from tests.integration.broker_harness import ROOT, BrokerProcess, RawClient, free_port, unique_chroot, wait_until
from tests.integration.test_metrics import scrape, value
from tests.integration.replicated_cluster import (CLUSTER_PROPS, WAIT, ProduceLoad, ReplicatedCluster,
                                                  check_nothing_lost)
from tests.integration.test_replication import log_end_offset, partition_dir

PROPS = dict(CLUSTER_PROPS, **{"replica.fetch.max.bytes": "16384"})
RECORD = b"r" * 1000


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    chroot = unique_chroot("reassign")
    brokers = []
    for i in range(4):
        metrics_port = free_port()
        broker = BrokerProcess(tmp_path_factory.mktemp(f"ra-broker{i}-"), zookeeper.connect_string, chroot, i,
                               overrides=dict(PROPS, **{"kafka.py.metrics.prometheus.port": str(metrics_port),
                                                        "kafka.py.metrics.prometheus.host": "127.0.0.1"}))
        broker.metrics_port = metrics_port
        brokers.append(broker)
    c = ReplicatedCluster(brokers)
    c.start(ids=(3,))
    c.start(ids=(0, 1, 2))
    assert c.wait_controller() == 3
    yield c
    for b in brokers:
        if b.running:
            b.stop()
    c.close()


@pytest.fixture(scope="module")
def admin(cluster):
    client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap(), request_timeout_ms=30000)
    yield client
    client.close()


def topic_znode(cluster: ReplicatedCluster, topic: str) -> dict:
    return json.loads(cluster.zk.get(f"/brokers/topics/{topic}")[0])


def replicas(cluster: ReplicatedCluster, topic: str, partition: int = 0) -> list[int]:
    return topic_znode(cluster, topic)["partitions"][str(partition)]


def reassigned(cluster: ReplicatedCluster, topic: str, target: list[int]) -> bool:
    znode = topic_znode(cluster, topic)
    return (znode["partitions"]["0"] == target and not znode.get("adding_replicas")
            and not znode.get("removing_replicas"))


def wait_moved(cluster: ReplicatedCluster, topic: str, target: list[int]) -> None:
    wait_until(lambda: reassigned(cluster, topic, target), WAIT,
               f"{topic}-0 was not reassigned to {target}: {topic_znode(cluster, topic)}", interval=0.2)
    cluster.wait_state(topic, lambda s: sorted(s["isr"]) == sorted(target) and s["leader"] in target,
                       f"the new replicas {target} lead and are in sync")


def fill(cluster: ReplicatedCluster, topic: str, count: int) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), acks="all")
    try:
        for _ in range(count):
            producer.send(topic, RECORD, partition=0)
        producer.flush(timeout=60)
    finally:
        producer.close()


def broker_config(cluster: ReplicatedCluster, broker_id: int) -> dict:
    path = f"/config/brokers/{broker_id}"
    if not cluster.zk.exists(path):
        return {}
    return json.loads(cluster.zk.get(path)[0])["config"]


def topic_config(cluster: ReplicatedCluster, topic: str) -> dict:
    return json.loads(cluster.zk.get(f"/config/topics/{topic}")[0])["config"]


def tool(cluster: ReplicatedCluster, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "kafka-reassign-partitions.sh"), "--bootstrap-server",
                           ",".join(cluster.bootstrap()), *map(str, args)],
                          capture_output=True, text=True, timeout=180)


def compact(value: dict) -> str:
    return json.dumps(value, separators=(",", ":"))


def plan(topic: str, target: list[int], partition: int = 0) -> dict:
    return {"version": 1, "partitions": [{"topic": topic, "partition": partition, "replicas": target}]}


def raw_alter(port: int, topic: str, partition: int, replicas_: list[int] | None):
    request = build_entity(request_schema(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, 0), {
        "timeout": 30000, "topics": [{"name": topic, "partitions": [
            {"partition_index": partition, "replicas": replicas_}]}]})
    with RawClient(port, timeout=30) as client:
        return client.request(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, 0, request)


def raw_list(port: int):
    request = build_entity(request_schema(ApiKeys.LIST_PARTITION_REASSIGNMENTS, 0), {"timeout": 30000,
                                                                                      "topics": None})
    with RawClient(port, timeout=30) as client:
        return client.request(ApiKeys.LIST_PARTITION_REASSIGNMENTS, 0, request)


def with_fresh_admin(cluster: ReplicatedCluster, call):
    """``call(admin)`` with a new admin client of the live brokers; None when the cluster does not
    answer yet (a dead controller's id is still in some broker's metadata, say)."""
    try:
        client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap(), request_timeout_ms=10000)
    except (KafkaError, OSError):
        return None
    try:
        return call(client)
    except (KafkaError, OSError, RuntimeError, CommandError):
        return None
    finally:
        client.close()


# -- bad requests ------------------------------------------------------------------------------


def test_bad_reassignments_are_refused_with_kafkas_errors_and_change_nothing(cluster, admin):
    topic = "refused"
    cluster.create_topic(topic, {0: [0, 1, 2], 1: [1, 2, 0]})
    before = topic_znode(cluster, topic)

    result = admin.alter_partition_reassignments({
        KTP(topic, 0): [1, 2, 4],      # broker 4 does not exist
        KTP(topic, 1): [1, 1, 2],      # a duplicate
        KTP(topic, 5): [1, 2, 3],      # no such partition
        KTP("no-such-topic", 0): [1, 2, 3],
    })
    assert result == {KTP(topic, 0): InvalidReplicationAssignmentError, KTP(topic, 1): InvalidReplicationAssignmentError,
                      KTP(topic, 5): UnknownTopicOrPartitionError,
                      KTP("no-such-topic", 0): UnknownTopicOrPartitionError}
    # cancelling what is not being reassigned
    assert admin.alter_partition_reassignments({KTP(topic, 0): None}) == {
        KTP(topic, 0): NoReassignmentInProgressError}

    # an empty replica list (kafka-python refuses to send one), with Kafka's messages
    controller = cluster.broker(cluster.wait_controller())
    [answer] = raw_alter(controller.port, topic, 0, []).responses
    [p] = answer.partitions
    assert (Errors.for_code(p.error_code), p.error_message) == (
        Errors.INVALID_REPLICA_ASSIGNMENT, "Empty replica list specified in partition reassignment.")
    [p] = raw_alter(controller.port, topic, 0, [1, 2, 4]).responses[0].partitions
    assert Errors.for_code(p.error_code) is Errors.INVALID_REPLICA_ASSIGNMENT
    assert p.error_message.startswith("Replica assignment has brokers that are not alive.")
    [p] = raw_alter(controller.port, topic, 0, None).responses[0].partitions
    assert (Errors.for_code(p.error_code), p.error_message) == (
        Errors.NO_REASSIGNMENT_IN_PROGRESS, Errors.NO_REASSIGNMENT_IN_PROGRESS.message)

    # a broker that is not the controller says so
    other = cluster.broker(next(i for i in (0, 1, 2, 3) if i != controller.broker_id))
    answer = raw_alter(other.port, topic, 0, [1, 2, 3])
    assert Errors.for_code(answer.error_code) is Errors.NOT_CONTROLLER
    assert Errors.for_code(raw_list(other.port).error_code) is Errors.NOT_CONTROLLER

    assert topic_znode(cluster, topic) == before
    assert admin.list_partition_reassignments() == {}
    assert not cluster.zk.exists("/admin/reassign_partitions")


# -- a reassignment under load ---------------------------------------------------------------


def test_a_partition_moves_to_new_brokers_under_an_acks_all_producer_without_losing_a_record(cluster, admin):
    topic = "moved-under-load"
    cluster.create_topic(topic, {0: [0, 1, 2]}, min_insync_replicas="2")
    assert cluster.state(topic)["leader"] == 0
    load = ProduceLoad(cluster.bootstrap(), topic, 1, describe=lambda: cluster.describe(topic, 1)).start()
    try:
        load.wait_acked(300)
        assert admin.alter_partition_reassignments({KTP(topic, 0): [1, 2, 3]}) == {KTP(topic, 0): None}
        wait_moved(cluster, topic, [1, 2, 3])
        load.wait_acked(300)
    finally:
        load.stop()
    assert admin.list_partition_reassignments() == {}
    wait_until(lambda: not partition_dir(cluster.brokers[0], topic).exists(), WAIT,
               "the removed replica's log was not deleted")
    total = check_nothing_lost(cluster, load, topic, 1, replica_ids=(1, 2, 3))
    assert total >= len(load.acked) >= 600


# -- the tool ----------------------------------------------------------------------------------


def test_the_tool_generates_executes_throttles_lists_verifies_and_cancels(cluster, tmp_path):
    topic = "tool-moved"
    cluster.create_topic(topic, {0: [0, 1, 2]})
    fill(cluster, topic, 300)  # 300 KB: many 16 KiB fetches for a new replica

    topics_file = tmp_path / "topics.json"
    topics_file.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    r = tool(cluster, "--generate", "--topics-to-move-json-file", topics_file, "--broker-list", "1,2,3")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "Current partition replica assignment"
    assert lines[1] == compact({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [0, 1, 2], "log_dirs": ["any", "any", "any"]}]})
    assert lines[2:4] == ["", "Proposed partition reassignment configuration"]
    [proposed] = json.loads(lines[4])["partitions"]
    assert sorted(proposed["replicas"]) == [1, 2, 3] and proposed["log_dirs"] == ["any"] * 3
    assert replicas(cluster, topic) == [0, 1, 2]  # generating changes nothing

    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan(topic, [1, 2, 3])))
    r = tool(cluster, "--execute", "--reassignment-json-file", plan_file, "--throttle", "1")
    assert r.returncode == 0, r.stderr
    rollback = compact({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [0, 1, 2], "log_dirs": ["any", "any", "any"]}]})
    assert r.stdout == (
        f"Current partition replica assignment\n\n{rollback}\n\n"
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle "
        "is removed.\n"
        "The inter-broker throttle limit was set to 1 B/s\n"
        f"Successfully started partition reassignment for {topic}-0\n")
    # the throttles Kafka's tool sets: current replicas on the leader side, new ones on the follower side
    assert {k: v for k, v in topic_config(cluster, topic).items() if "throttled" in k} == {
        "leader.replication.throttled.replicas": "0:0,0:1,0:2", "follower.replication.throttled.replicas": "0:3"}
    for b in range(4):
        assert broker_config(cluster, b) == {"leader.replication.throttled.rate": "1",
                                             "follower.replication.throttled.rate": "1"}
    # under way, in ZooKeeper as Kafka writes it
    znode = topic_znode(cluster, topic)
    assert (znode["partitions"]["0"], znode["adding_replicas"], znode["removing_replicas"]) == (
        [1, 2, 3, 0], {"0": [3]}, {"0": [0]})
    r = tool(cluster, "--list")
    assert (r.returncode, r.stdout) == (
        0, f"Current partition reassignments:\n{topic}-0: replicas: 1,2,3,0. adding: 3. removing: 0.\n")
    described = subprocess.run([str(ROOT / "bin" / "kafka-topics.sh"), "--bootstrap-server",
                                cluster.bootstrap()[0], "--describe", "--topic", topic],
                               capture_output=True, text=True, timeout=180)
    assert described.stdout.splitlines()[1:] == [
        f"\tTopic: {topic}\tPartition: 0\tLeader: 0\tReplicas: 1,2,3,0\tIsr: 0,1,2\tAdding Replicas: 3"
        "\tRemoving Replicas: 0"], described.stdout + described.stderr
    assert "\tReplicationFactor: 3\t" in described.stdout
    # Kafka's reassignment metrics: the leader counts the partition and what it sent the new
    # replica, which counts what it received
    leader_metrics = scrape(cluster.broker(0).metrics_port)
    assert value(leader_metrics, "kafka_server_replicamanager_reassigningpartitions") == 1
    assert value(leader_metrics, "kafka_server_brokertopicmetrics_reassignmentbytesout_total") >= 1000
    assert value(scrape(cluster.broker(3).metrics_port),
                 "kafka_server_brokertopicmetrics_reassignmentbytesin_total") >= 1000
    # held back by the throttle: at 1 B/s broker 3 gets one 16 KiB fetch per quota window span
    time.sleep(3)
    assert log_end_offset(cluster.brokers[3], topic) < 300
    r = tool(cluster, "--verify", "--reassignment-json-file", plan_file)
    assert (r.returncode, r.stdout) == (
        0, f"Status of partition reassignment:\nReassignment of partition {topic}-0 is still in progress.\n\n")
    assert broker_config(cluster, 3)  # throttles stay while a reassignment runs

    # another reassignment needs --additional while this one runs
    other_plan = tmp_path / "other.json"
    other_plan.write_text(json.dumps(plan("moved-under-load", [1, 2, 0])))
    r = tool(cluster, "--execute", "--reassignment-json-file", other_plan)
    assert r.returncode == 1 and "Cannot execute because there is an existing partition assignment." in r.stderr

    r = tool(cluster, "--cancel", "--reassignment-json-file", plan_file)
    assert (r.returncode, r.stdout) == (0, (
        f"Successfully cancelled partition reassignment for: {topic}-0\n"
        "None of the specified partition moves are active.\n"
        "Clearing broker-level throttles on brokers 0,1,2,3\n"
        f"Clearing topic-level throttles on topic {topic}\n")), r.stderr
    # back to the original replicas, in the order Kafka's ReplicaAssignment keeps them (the full
    # set less the ones being added)
    wait_moved(cluster, topic, [1, 2, 0])
    wait_until(lambda: not partition_dir(cluster.brokers[3], topic).exists(), WAIT,
               "the cancelled replica's log was not deleted")
    assert all(broker_config(cluster, b) == {} for b in range(4))
    assert not any("throttled" in k for k in topic_config(cluster, topic))
    assert tool(cluster, "--list").stdout == "No partition reassignments found.\n"

    # again without a throttle: it completes, and --verify says so
    r = tool(cluster, "--execute", "--reassignment-json-file", plan_file)
    assert r.returncode == 0 and r.stdout.endswith(f"Successfully started partition reassignment for {topic}-0\n")
    wait_moved(cluster, topic, [1, 2, 3])
    r = tool(cluster, "--verify", "--reassignment-json-file", plan_file)
    assert (r.returncode, r.stdout) == (0, (
        f"Status of partition reassignment:\nReassignment of partition {topic}-0 is complete.\n\n"
        "Clearing broker-level throttles on brokers 0,1,2,3\n"
        f"Clearing topic-level throttles on topic {topic}\n"))
    wait_until(lambda: not partition_dir(cluster.brokers[0], topic).exists(), WAIT,
               "the removed replica's log was not deleted")
    assert log_end_offset(cluster.brokers[3], topic) == 300


def test_the_tool_refuses_bad_plans_and_changes_nothing(cluster, tmp_path):
    topic = "refused"  # made by the first test, on [0, 1, 2] and [1, 2, 0]
    before = topic_znode(cluster, topic)

    def refused(partitions: list[dict], message: str) -> None:
        path = tmp_path / "bad.json"
        path.write_text(json.dumps({"version": 1, "partitions": partitions}))
        r = tool(cluster, "--execute", "--reassignment-json-file", path)
        assert r.returncode == 1, r.stdout
        assert message in r.stderr, r.stderr

    refused([{"topic": topic, "partition": 0, "replicas": [1, 2, 4]}], "Error: Unknown broker id 4")
    refused([{"topic": topic, "partition": 0, "replicas": [1, 1, 2]}],
            f"Error: Partition replica lists may not contain duplicate entries: {topic}-0 contains multiple "
            "entries for 1")
    refused([{"topic": topic, "partition": 0, "replicas": []}], "Error: Partition replica list cannot be empty")
    refused([], "Error: Partition reassignment list cannot be empty")
    refused([{"topic": topic, "partition": 0, "replicas": [1, 2, 3]}, {"topic": topic, "partition": 0,
                                                                         "replicas": [2, 3, 0]}],
            f"Error: Partition reassignment contains duplicate topic partitions: {topic}-0")
    refused([{"topic": topic, "partition": 7, "replicas": [1, 2, 3]}],
            f"Error reassigning partition(s):\n{topic}-7: The partition does not exist.")
    path = tmp_path / "not-json.json"
    path.write_text("{\"version\": 1, \"partitions\": [")
    r = tool(cluster, "--execute", "--reassignment-json-file", path)
    assert r.returncode == 1 and r.stderr.startswith("Error: The input string is not a valid JSON")
    r = tool(cluster, "--verify", "--throttle", "5", "--reassignment-json-file", path)
    assert r.returncode == 2 and 'Option "[throttle]" can\'t be used with action "[verify]"' in r.stderr

    assert topic_znode(cluster, topic) == before
    assert tool(cluster, "--list").stdout == "No partition reassignments found.\n"
    assert all(broker_config(cluster, b) == {} for b in range(4))


# -- the controller dies mid-way --------------------------------------------------------------


def zk_tool(cluster: ReplicatedCluster, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "kafka-reassign-partitions.sh"), "--zookeeper",
                           cluster.brokers[0].zk_connect, *map(str, args)],
                          capture_output=True, text=True, timeout=180)


def test_the_tool_through_zookeeper_generates_executes_and_verifies(cluster, tmp_path):
    """The deprecated --zookeeper mode, as 2.8.2's: /admin/reassign_partitions written by the
    tool, carried out by the controller, throttles set and cleared in the config znodes."""
    topic = "zk-moved"
    cluster.create_topic(topic, {0: [0, 1, 2]})
    fill(cluster, topic, 20)
    warning = "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka.\n"
    topics_file = tmp_path / "topics.json"
    topics_file.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    r = zk_tool(cluster, "--generate", "--topics-to-move-json-file", topics_file, "--broker-list", "1,2,3")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] + "\n" == warning and lines[1] == "Current partition replica assignment"
    assert lines[2] == compact({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [0, 1, 2], "log_dirs": ["any", "any", "any"]}]})
    assert sorted(json.loads(lines[5])["partitions"][0]["replicas"]) == [1, 2, 3]

    plan_file = tmp_path / "zk-plan.json"
    plan_file.write_text(json.dumps(plan(topic, [1, 2, 3])))
    r = zk_tool(cluster, "--execute", "--reassignment-json-file", plan_file, "--throttle", "10000000")
    assert r.returncode == 0, r.stderr
    rollback = compact({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [0, 1, 2], "log_dirs": ["any", "any", "any"]}]})
    assert r.stdout == (
        f"{warning}Current partition replica assignment\n\n{rollback}\n\n"
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle "
        "is removed.\n"
        "The inter-broker throttle limit was set to 10000000 B/s\n"
        f"Successfully started partition reassignment for {topic}-0\n")
    assert {k: v for k, v in topic_config(cluster, topic).items() if "throttled" in k} == {
        "leader.replication.throttled.replicas": "0:0,0:1,0:2", "follower.replication.throttled.replicas": "0:3"}
    assert broker_config(cluster, 3) == {"leader.replication.throttled.rate": "10000000",
                                         "follower.replication.throttled.rate": "10000000"}
    wait_moved(cluster, topic, [1, 2, 3])
    wait_until(lambda: not cluster.zk.exists("/admin/reassign_partitions"), WAIT,
               "the controller never removed /admin/reassign_partitions")
    r = zk_tool(cluster, "--verify", "--reassignment-json-file", plan_file)
    assert (r.returncode, r.stdout) == (0, (
        f"{warning}Warning: because you are using the deprecated --zookeeper option, the results may be incomplete."
        "  Use --bootstrap-server instead for more accurate results.\n"
        f"Status of partition reassignment:\nReassignment of partition {topic}-0 is complete.\n"
        "Clearing broker-level throttles on brokers 0,1,2,3\n"
        f"Clearing topic-level throttles on topic {topic}\n")), r.stderr
    assert all(broker_config(cluster, b) == {} for b in range(4))
    assert not any("throttled" in k for k in topic_config(cluster, topic))

    # what the ZooKeeper mode cannot do, and a plan naming a broker that does not exist
    r = zk_tool(cluster, "--list")
    assert r.returncode == 2 and 'Option "[zookeeper]" can\'t be used with action "[list]"' in r.stderr
    plan_file.write_text(json.dumps(plan(topic, [1, 2, 7])))
    r = zk_tool(cluster, "--execute", "--reassignment-json-file", plan_file)
    assert r.returncode == 1
    assert r.stderr == "Error: The proposed assignment contains non-existent brokerIDs: 7\n"
    assert replicas(cluster, topic) == [1, 2, 3]


def test_a_reassignment_survives_the_controller_killed_mid_way(cluster, admin):
    """Broker 3, the controller and the replica being added, is killed while the move is held
    back by a throttle; the next controller resumes the reassignment from ZooKeeper, and once
    broker 3 is back (and the throttle gone) the move completes, under an acks=all producer."""
    assert cluster.wait_controller() == 3
    topic = "moved-through-failover"
    cluster.create_topic(topic, {0: [0, 1, 2]}, min_insync_replicas="2")
    # broker 0 leads; it sends the new replica at most 1 B/s once the first fetch is over
    incremental_alter_configs(admin, BROKER_RESOURCE, "0", [("leader.replication.throttled.rate", OP_SET, "1")])
    incremental_alter_configs(admin, TOPIC_RESOURCE, topic, [("leader.replication.throttled.replicas", OP_SET,
                                                              "0:0")])
    load = ProduceLoad(cluster.bootstrap(), topic, 1, describe=lambda: cluster.describe(topic, 1)).start()
    try:
        load.wait_acked(1500)  # more than a 16 KiB fetch holds
        assert admin.alter_partition_reassignments({KTP(topic, 0): [1, 2, 3]}) == {KTP(topic, 0): None}
        assert topic_znode(cluster, topic)["adding_replicas"] == {"0": [3]}

        cluster.broker(3).kill()
        new_controller = cluster.wait_controller(exclude=3)
        load.wait_acked(200)
        # the new controller knows the reassignment from ZooKeeper; the throttle goes
        expected = {KTP(topic, 0): {"replicas": [1, 2, 3, 0], "adding_replicas": [3], "removing_replicas": [0]}}
        wait_until(lambda: with_fresh_admin(cluster, lambda a: a.list_partition_reassignments()) == expected, WAIT,
                   f"controller {new_controller} does not list the reassignment")
        wait_until(lambda: with_fresh_admin(cluster, lambda a: (
            incremental_alter_configs(a, BROKER_RESOURCE, "0", [("leader.replication.throttled.rate", OP_DELETE,
                                                                   None)]),
            incremental_alter_configs(a, TOPIC_RESOURCE, topic, [("leader.replication.throttled.replicas",
                                                                  OP_DELETE, None)]))) is not None, WAIT,
                   "the throttle could not be removed")
        assert not reassigned(cluster, topic, [1, 2, 3])  # it cannot finish without broker 3

        cluster.broker(3).restart(WAIT)
        wait_moved(cluster, topic, [1, 2, 3])
        load.wait_acked(200)
    finally:
        load.stop()
    wait_until(lambda: not partition_dir(cluster.brokers[0], topic).exists(), WAIT,
               "the removed replica's log was not deleted")
    total = check_nothing_lost(cluster, load, topic, 1, replica_ids=(1, 2, 3))
    assert total >= len(load.acked) >= 2100
