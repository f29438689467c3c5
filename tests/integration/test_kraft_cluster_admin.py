"""The partition admin of a KRaft cluster, on real processes with no ZooKeeper: one controller
and three brokers. CreatePartitions adds led, replicated partitions that take records; a
partition reassignment through bin/kafka-reassign-partitions.sh moves a partition's replicas
and keeps its data; an unclean leader election, through bin/kafka-leader-election.sh or by
the topic's ``unclean.leader.election.enable`` when the out-of-sync replica comes back, brings
an offline partition back while a partition of a topic without it stays offline.

Each of these goes through the brokers to the active controller (forwarded requests or the
controller's own APIs) and comes back to every broker as metadata records, so the asserts
read the brokers' metadata, as a client would."""
from __future__ import annotations

import json
import subprocess

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.errors import InvalidPartitionsError

from tests.integration.broker_harness import ROOT, wait_until
from tests.integration.kraft_harness import KRaftQuorum

WAIT = 60.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("kraft-admin")
    quorum = KRaftQuorum(base, size=1, overrides={"broker.session.timeout.ms": "3000"})
    quorum.format()
    brokers = quorum.add_brokers(base, 3, overrides={"broker.heartbeat.interval.ms": "500",
                                                     "replica.lag.time.max.ms": "3000"})
    try:
        quorum.start()
        yield quorum, {b.node_id: b for b in brokers}
    finally:
        quorum.stop()


def bootstrap(brokers) -> str:
    return ",".join(b.bootstrap for b in brokers.values() if b.running)


def admin_of(brokers) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap(brokers), request_timeout_ms=30000)


def partitions(brokers, topic: str) -> dict[int, dict]:
    """partition -> {"leader", "replicas", "isr"} as the brokers' metadata has it."""
    admin = admin_of(brokers)
    try:
        [described] = admin.describe_topics([topic])
    finally:
        admin.close()
    return {p["partition_index"]: {"leader": p["leader_id"], "replicas": list(p["replica_nodes"]),
                                   "isr": sorted(p["isr_nodes"])}
            for p in described["partitions"]}


def wait_state(brokers, topic: str, check, what: str) -> dict[int, dict]:
    seen: list = [None]

    def holds() -> bool:
        try:
            seen[0] = partitions(brokers, topic)
        except Exception:  # noqa: BLE001 - a broker still starting, a topic not yet known
            return False
        return check(seen[0])

    wait_until(holds, WAIT, lambda: f"{topic}: {what}; last seen {seen[0]}", interval=0.25)
    return seen[0]


def create(brokers, topic: NewTopic) -> None:
    admin = admin_of(brokers)
    try:
        admin.create_topics([topic], timeout_ms=30000)
    finally:
        admin.close()


def produce(brokers, topic: str, partition: int, values: list[bytes]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap(brokers), acks="all", retries=5,
                             request_timeout_ms=15000, max_block_ms=30000)
    try:
        for value in values:
            producer.send(topic, value=value, partition=partition).get(timeout=30)
    finally:
        producer.close(timeout=10)


def consume(brokers, topic: str, partition: int, count: int) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(brokers), enable_auto_commit=False,
                             request_timeout_ms=20000)
    tp = TopicPartition(topic, partition)
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got: list[bytes] = []

        def read_all() -> bool:
            for records in consumer.poll(timeout_ms=500).values():
                got.extend(r.value for r in records)
            return len(got) >= count

        wait_until(read_all, WAIT, lambda: f"{topic}-{partition}: read {len(got)} of {count}")
        return got
    finally:
        consumer.close()


def run_tool(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / script), *args], capture_output=True, text=True, timeout=180)


def test_create_partitions_adds_led_replicated_partitions_that_take_records(cluster):
    _, brokers = cluster
    create(brokers, NewTopic("grown", 2, 3))
    wait_state(brokers, "grown", lambda s: len(s) == 2 and all(p["leader"] >= 0 for p in s.values()), "not led")

    admin = admin_of(brokers)
    try:
        admin.create_partitions({"grown": NewPartitions(5)})
        # fewer partitions than the topic has: Kafka's INVALID_PARTITIONS, nothing changed
        with pytest.raises(InvalidPartitionsError):
            admin.create_partitions({"grown": NewPartitions(3)})
    finally:
        admin.close()
    state = wait_state(brokers, "grown", lambda s: len(s) == 5 and all(
        p["leader"] >= 0 and len(p["isr"]) == 3 for p in s.values()), "five led, fully replicated partitions")
    assert all(sorted(p["replicas"]) == sorted(brokers) for p in state.values())

    values = [b"new-partition-%d" % i for i in range(20)]
    produce(brokers, "grown", 4, values)
    assert consume(brokers, "grown", 4, len(values)) == values


def test_reassignment_moves_the_replicas_and_keeps_the_data(cluster, tmp_path):
    _, brokers = cluster
    first, second, third = sorted(brokers)
    create(brokers, NewTopic("moved", -1, -1, replica_assignments={0: [first, second]}))
    wait_state(brokers, "moved", lambda s: s.get(0, {}).get("isr") == sorted([first, second]), "not in sync")
    values = [b"moved-%d" % i for i in range(50)]
    produce(brokers, "moved", 0, values)

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "moved", "partition": 0, "replicas": [third, second]}]}))
    started = run_tool("kafka-reassign-partitions.sh", "--bootstrap-server", bootstrap(brokers),
                       "--reassignment-json-file", str(plan), "--execute")
    assert started.returncode == 0, started.stdout + started.stderr
    assert "Successfully started partition reassignment for moved-0" in started.stdout, started.stdout

    verified: list = [None]

    def complete() -> bool:
        verified[0] = run_tool("kafka-reassign-partitions.sh", "--bootstrap-server", bootstrap(brokers),
                               "--reassignment-json-file", str(plan), "--verify")
        return "Reassignment of partition moved-0 is complete." in verified[0].stdout

    wait_until(complete, WAIT, lambda: f"reassignment not complete: {verified[0].stdout}{verified[0].stderr}",
               interval=1.0)
    state = wait_state(brokers, "moved", lambda s: s[0]["replicas"] == [third, second]
                       and s[0]["isr"] == sorted([second, third]), "replicas not moved")
    assert state[0]["leader"] in (second, third)
    # the replica taken off the partition deletes its copy
    removed_dir = brokers[first].log_dir / "moved-0"
    wait_until(lambda: not removed_dir.exists(), WAIT, f"{removed_dir} still there")
    assert consume(brokers, "moved", 0, len(values)) == values


def test_unclean_election_by_the_tool_and_by_the_topic_config(cluster):
    _, brokers = cluster
    leader, follower = sorted(brokers)[:2]
    for topic in ("unclean-tool", "unclean-config"):
        create(brokers, NewTopic(topic, -1, -1, replica_assignments={0: [leader, follower]},
                                 topic_configs={"min.insync.replicas": "1"}))
    for topic in ("unclean-tool", "unclean-config"):
        wait_state(brokers, topic, lambda s: s.get(0, {}).get("leader") == leader
                   and s[0]["isr"] == sorted([leader, follower]), "not led by its first replica, in sync")

    # the follower goes away; the leader alone takes records, so the follower falls out of sync
    assert brokers[follower].stop() == 0, brokers[follower].tail()
    for topic in ("unclean-tool", "unclean-config"):
        wait_state(brokers, topic, lambda s: s[0]["isr"] == [leader], "follower still in the ISR")
        produce(brokers, topic, 0, [b"only-on-the-leader"])
    # then the leader dies: the partitions have no in-sync replica left
    brokers[leader].kill()
    for topic in ("unclean-tool", "unclean-config"):
        wait_state(brokers, topic, lambda s: s[0]["leader"] == -1, "still led")

    admin = admin_of(brokers)
    try:
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "unclean-config",
                                            configs={"unclean.leader.election.enable": "true"})])
    finally:
        admin.close()

    brokers[follower].start()
    # the topic that allows it elects the returning, out-of-sync replica by itself...
    wait_state(brokers, "unclean-config", lambda s: s[0]["leader"] == follower, "not elected uncleanly")
    # ...the other stays offline (the same broker is back and unfenced: it leads the first topic)
    assert partitions(brokers, "unclean-tool")[0]["leader"] == -1

    elected = run_tool("kafka-leader-election.sh", "--bootstrap-server", bootstrap(brokers),
                       "--election-type", "unclean", "--topic", "unclean-tool", "--partition", "0")
    assert elected.returncode == 0, elected.stdout + elected.stderr
    assert elected.stdout == "Successfully completed leader election (UNCLEAN) for partitions unclean-tool-0\n"
    wait_state(brokers, "unclean-tool", lambda s: s[0]["leader"] == follower, "not elected by the tool")
    # the new leader takes records
    produce(brokers, "unclean-tool", 0, [b"after-the-election"])

    # the old leader comes back, truncates to the new leader's log and catches up
    brokers[leader].start()
    for topic in ("unclean-tool", "unclean-config"):
        wait_state(brokers, topic, lambda s: s[0]["isr"] == sorted([leader, follower]), "old leader not back in sync")
