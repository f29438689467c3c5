"""The operator scripts kafka-verifiable-producer.sh, kafka-verifiable-consumer.sh,
kafka-mirror-maker.sh, kafka-replica-verification.sh, kafka-streams-application-reset.sh and
zookeeper-security-migration.sh, run as processes against real brokers and a real ZooKeeper.

One module-scoped pair of clusters serves every test: a two-broker source cluster and a
one-broker target cluster for MirrorMaker, each under its own ZooKeeper chroot.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

from tests.integration.broker_harness import BrokerProcess, ROOT, unique_chroot, wait_until

BIN = ROOT / "bin"


@pytest.fixture(scope="module")
def source(zookeeper, tmp_path_factory):
    chroot = unique_chroot("operator-tools-source")
    brokers = [BrokerProcess(tmp_path_factory.mktemp(f"source-{i}"), zookeeper.connect_string, chroot, broker_id=i)
               for i in range(2)]
    for b in brokers:
        b.start(wait=False)
    for b in brokers:
        b.wait_started()
    yield brokers
    for b in brokers:
        if b.running:
            b.stop()


@pytest.fixture(scope="module")
def target(zookeeper, tmp_path_factory):
    b = BrokerProcess(tmp_path_factory.mktemp("target"), zookeeper.connect_string,
                      unique_chroot("operator-tools-target"))
    b.start()
    yield b
    if b.running:
        b.stop()


def bootstrap(brokers) -> str:
    return ",".join(b.bootstrap for b in brokers)


def run(script: str, *args: str, timeout: float = 90, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / script), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=dict(os.environ, **(env or {})))


def create_topic(servers: str, name: str, partitions: int = 1, replication: int = 1) -> None:
    admin = KafkaAdminClient(bootstrap_servers=servers)
    try:
        admin.create_topics([NewTopic(name, partitions, replication)])
    finally:
        admin.close()


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def read_all(servers: str, topic: str, expected: int, timeout: float = 60) -> list:
    consumer = KafkaConsumer(topic, bootstrap_servers=servers, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=2000)
    records = []
    deadline = time.monotonic() + timeout
    try:
        while len(records) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=1000).values():
                records.extend(batch)
    finally:
        consumer.close()
    return records


# -- kafka-verifiable-producer.sh / kafka-verifiable-consumer.sh --------------------------------

def test_verifiable_producer_and_consumer(source):
    servers = bootstrap(source)
    create_topic(servers, "verifiable", partitions=2, replication=2)
    produced = run("kafka-verifiable-producer.sh", "--bootstrap-server", servers, "--topic", "verifiable",
                   "--max-messages", "20", "--value-prefix", "7", "--repeating-keys", "3")
    assert produced.returncode == 0, produced.stderr
    lines = events(produced.stdout)
    names = [e["name"] for e in lines]
    assert names[0] == "startup_complete" and names[-2:] == ["shutdown_complete", "tool_data"], names
    successes = [e for e in lines if e["name"] == "producer_send_success"]
    assert sorted(e["value"] for e in successes) == sorted(f"7.{i}" for i in range(20))
    assert {e["key"] for e in successes} == {"0", "1", "2"}
    assert all(list(e) == ["timestamp", "name", "key", "value", "topic", "partition", "offset"] for e in successes)
    offsets = {(e["partition"], e["offset"]) for e in successes}
    assert len(offsets) == 20 and {p for p, _ in offsets} <= {0, 1}
    assert all(isinstance(e["timestamp"], int) for e in lines)
    tool_data = lines[-1]
    assert (tool_data["sent"], tool_data["acked"], tool_data["target_throughput"]) == (20, 20, -1)
    assert tool_data["avg_throughput"] > 0

    consumed = run("kafka-verifiable-consumer.sh", "--bootstrap-server", servers, "--topic", "verifiable",
                   "--group-id", "verifiable-group", "--max-messages", "20", "--verbose")
    assert consumed.returncode == 0, consumed.stderr
    lines = events(consumed.stdout)
    names = [e["name"] for e in lines]
    assert names[0] == "startup_complete" and names[-1] == "shutdown_complete", names
    assigned = [e for e in lines if e["name"] == "partitions_assigned"]
    assert sorted((p["topic"], p["partition"]) for p in assigned[0]["partitions"]) == [
        ("verifiable", 0), ("verifiable", 1)]
    records = [e for e in lines if e["name"] == "record_data"]
    assert sorted(e["value"] for e in records) == sorted(f"7.{i}" for i in range(20))
    assert {(e["partition"], e["offset"]) for e in records} == offsets
    consumed_events = [e for e in lines if e["name"] == "records_consumed"]
    assert sum(s["count"] for e in consumed_events for s in e["partitions"]) == 20
    for e in consumed_events:
        for summary in e["partitions"]:
            assert set(summary) == {"topic", "partition", "count", "minOffset", "maxOffset"}
            assert summary["maxOffset"] - summary["minOffset"] + 1 == summary["count"]
    commits = [e for e in lines if e["name"] == "offsets_committed"]
    assert commits and all(e["success"] is True and "error" not in e for e in commits)
    last = {}
    for e in commits:
        for o in e["offsets"]:
            last[o["partition"]] = o["offset"]
    ends = {p: max(o for q, o in offsets if q == p) + 1 for p, _ in offsets}
    assert last == ends

    # the group's committed offsets are what the tool said it committed
    admin = KafkaAdminClient(bootstrap_servers=servers)
    try:
        committed = admin.list_group_offsets("verifiable-group")["verifiable-group"]
    finally:
        admin.close()
    assert {tp.partition: om.offset for tp, om in committed.items()} == ends


def test_verifiable_producer_until_signalled(source):
    """--max-messages -1 runs until SIGTERM, then flushes and reports as Kafka's shutdown hook does."""
    servers = bootstrap(source)
    process = subprocess.Popen([str(BIN / "kafka-verifiable-producer.sh"), "--bootstrap-server", servers,
                                "--topic", "verifiable-endless", "--throughput", "50"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        seen = []
        deadline = time.monotonic() + 60
        while len([e for e in seen if e["name"] == "producer_send_success"]) < 5 and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            seen.append(json.loads(line))
        process.send_signal(signal.SIGTERM)
        # the rest through the same buffered reader (communicate() would skip what it holds)
        out = process.stdout.read()
        err = process.stderr.read()
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    lines = seen + events(out)
    assert [e["name"] for e in lines][-2:] == ["shutdown_complete", "tool_data"], err
    acked = sum(1 for e in lines if e["name"] == "producer_send_success")
    assert lines[-1]["acked"] == acked >= 5
    assert lines[-1]["sent"] >= acked and lines[-1]["target_throughput"] == 50
