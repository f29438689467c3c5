"""A broker process with two log dirs, driven as an operator would: kafka-python's admin client
(``describe_log_dirs``, ``alter_replica_log_dirs``, broker configs), kafka-python producers and
consumers, and bin/kafka-log-dirs.sh.

New partitions go to the dir holding fewest; a replica moved to the other dir keeps its
records and is served from there; a move to a dir not in ``log.dirs`` is refused with
LOG_DIR_NOT_FOUND and changes nothing; a broker killed while a move is copying (slowed down by
``replica.alter.log.dirs.io.max.bytes.per.second``) finds its ``-future`` log again at
restart and finishes the move. One broker serves the whole module.
"""
from __future__ import annotations

import json
import os
import subprocess

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition, TopicPartitionReplica
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import LogDirNotFoundError, NoError

from tests.integration.broker_harness import ROOT, wait_until
from tests.integration.conftest import new_broker

# JBOD on a ZooKeeper-mode broker and on a KRaft node.
pytestmark = pytest.mark.metadata_modes("zookeeper", "kraft")

WAIT = 90.0
# the copy of a move reads this much per round; small, so that a quota can slow it down
FETCH_MAX_BYTES = 16384


@pytest.fixture(scope="module")
def broker(request, metadata_mode, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("log-dirs-broker")
    dirs = [str(workdir / "dir-a"), str(workdir / "dir-b")]
    b = new_broker(request, metadata_mode, workdir,
                   overrides={"log.dirs": ",".join(dirs), "replica.fetch.max.bytes": str(FETCH_MAX_BYTES),
                              "replica.fetch.backoff.ms": "200"})
    b.dirs = dirs
    b.start()
    yield b
    if b.running:
        assert b.stop() == 0, b.tail()


@pytest.fixture
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=30000)
    yield client
    client.close()


def create_topic(admin, name: str, partitions: int = 1) -> None:
    admin.create_topics([NewTopic(name, partitions, 1)], timeout_ms=30000)


def replicas(admin) -> dict[tuple[str, int], list[tuple[str, int, int, bool]]]:
    """(topic, partition) -> [(log dir, size, offset lag, is future)] on broker 0."""
    [answer] = admin.describe_log_dirs(brokers=[0])
    found: dict[tuple[str, int], list] = {}
    for log_dir in answer["log_dirs"]:
        assert log_dir["error_code"] == 0, log_dir
        for topic in log_dir["topics"]:
            for p in topic["partitions"]:
                found.setdefault((topic["name"], p["partition_index"]), []).append(
                    (log_dir["log_dir"], p["partition_size"], p["offset_lag"], p["is_future_key"]))
    return found


def produce(broker, topic: str, count: int, size: int = 100, partition: int = 0) -> list[bytes]:
    values = [f"{topic}-{i:06d}-".encode().ljust(size, b"x") for i in range(count)]
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", linger_ms=5)
    try:
        futures = [producer.send(topic, value=v, partition=partition) for v in values]
        for f in futures:
            f.get(timeout=60)
    finally:
        producer.close(timeout=10)
    return values


def consume(broker, topic: str, partition: int = 0) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False,
                             consumer_timeout_ms=10000)
    try:
        tp = TopicPartition(topic, partition)
        end = consumer.end_offsets([tp])[tp]
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        values = []
        wait_until(lambda: (values.extend(r.value for batch in consumer.poll(timeout_ms=1000).values()
                                          for r in batch) or consumer.position(tp) >= end),
                   WAIT, f"{topic}-{partition}: not read up to {end}")
        return values
    finally:
        consumer.close()


def dynamic_broker_configs(admin) -> dict[str, str]:
    """Broker 0's own dynamic configs (in ZooKeeper or in the metadata log), as DescribeConfigs
    reports them."""
    configs = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "0")],
                                     config_filter="all")["broker"]["0"]
    return {name: c["value"] for name, c in configs.items() if c["config_source"] == "DYNAMIC_BROKER_CONFIG"}


def other_dir(broker, log_dir: str) -> str:
    [other] = [d for d in broker.dirs if d != log_dir]
    return other


def test_partitions_spread_over_the_dirs_and_are_described(broker, admin):
    create_topic(admin, "spread", 4)
    wait_until(lambda: len([k for k in replicas(admin) if k[0] == "spread"]) == 4, WAIT, "4 replicas described")
    found = replicas(admin)
    placed = [found[("spread", p)] for p in range(4)]
    assert all(len(r) == 1 and r[0][3] is False and r[0][2] == 0 for r in placed), placed
    per_dir = sorted(sum(1 for r in placed if r[0][0] == d) for d in broker.dirs)
    assert per_dir == [2, 2], placed
    produce(broker, "spread", 50)
    assert replicas(admin)[("spread", 0)][0][1] > 50 * 100


def test_a_moved_replica_keeps_its_records_and_is_served_from_its_new_dir(broker, admin):
    create_topic(admin, "mover")
    values = produce(broker, "mover", 300)
    [(source, size, _, _)] = replicas(admin)[("mover", 0)]
    dest = other_dir(broker, source)
    result = admin.alter_replica_log_dirs({TopicPartitionReplica("mover", 0, 0): dest})
    assert result == {TopicPartitionReplica("mover", 0, 0): NoError}
    wait_until(lambda: [r[0] for r in replicas(admin).get(("mover", 0), [])] == [dest], WAIT,
               f"mover-0 did not move to {dest}: {replicas(admin).get(('mover', 0))}")
    [(_, moved_size, lag, is_future)] = replicas(admin)[("mover", 0)]
    assert (moved_size, lag, is_future) == (size, 0, False)
    assert os.path.isdir(os.path.join(dest, "mover-0"))
    assert not os.path.exists(os.path.join(source, "mover-0"))
    assert consume(broker, "mover") == values
    # and it takes new records there
    more = produce(broker, "mover", 10)
    assert consume(broker, "mover") == values + more


def test_a_move_to_a_dir_not_in_log_dirs_is_refused_and_changes_nothing(broker, admin, tmp_path):
    create_topic(admin, "stays")
    values = produce(broker, "stays", 20)
    before = replicas(admin)
    elsewhere = str(tmp_path / "not-a-log-dir")
    result = admin.alter_replica_log_dirs({TopicPartitionReplica("stays", 0, 0): elsewhere})
    assert result == {TopicPartitionReplica("stays", 0, 0): LogDirNotFoundError}
    assert replicas(admin) == before
    assert not os.path.exists(elsewhere)
    assert consume(broker, "stays") == values


def run_log_dirs(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "kafka-log-dirs.sh"), *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_kafka_log_dirs_sh_describe(broker, admin):
    create_topic(admin, "described", 2)
    produce(broker, "described", 5)
    wait_until(lambda: ("described", 1) in replicas(admin), WAIT, "described-1 is described")
    done = run_log_dirs("--bootstrap-server", broker.bootstrap, "--describe")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["Querying brokers for log directories information",
                         "Received log directory information from brokers 0"]
    assert len(lines) == 3
    described = json.loads(lines[2])
    assert described["version"] == 1
    [b0] = described["brokers"]
    assert b0["broker"] == 0
    assert sorted(d["logDir"] for d in b0["logDirs"]) == sorted(broker.dirs)
    assert all(d["error"] is None for d in b0["logDirs"])
    by_partition = {p["partition"]: p for d in b0["logDirs"] for p in d["partitions"]}
    assert set(by_partition[("described-0")]) == {"partition", "size", "offsetLag", "isFuture"}
    assert by_partition["described-0"]["size"] > 0 and by_partition["described-0"]["isFuture"] is False
    assert "described-1" in by_partition

    only = run_log_dirs("--bootstrap-server", broker.bootstrap, "--describe", "--broker-list", "0",
                        "--topic-list", "described")
    assert only.returncode == 0, only.stderr
    [b0] = json.loads(only.stdout.splitlines()[2])["brokers"]
    assert sorted(p["partition"] for d in b0["logDirs"] for p in d["partitions"]) == ["described-0", "described-1"]

    missing = run_log_dirs("--bootstrap-server", broker.bootstrap)
    assert missing.returncode == 1
    assert missing.stderr.splitlines()[0] == 'Missing required argument "[describe]"'
    unknown = run_log_dirs("--bootstrap-server", broker.bootstrap, "--describe", "--broker-list", "7")
    assert unknown.returncode == 1 and "Traceback" not in unknown.stderr
    assert "7" in unknown.stderr


THROTTLE = "replica.alter.log.dirs.io.max.bytes.per.second"


def set_alter_log_dirs_throttle(broker, value: str | None) -> None:
    """Set broker 0's throttle of moves between log dirs, or remove it (None), as
    docs/operations.md says to."""
    change = ["--delete-config", THROTTLE] if value is None else ["--add-config", f"{THROTTLE}={value}"]
    done = subprocess.run([str(ROOT / "bin" / "kafka-configs.sh"), "--bootstrap-server", broker.bootstrap,
                           "--entity-type", "brokers", "--entity-name", "0", "--alter", *change],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_a_move_survives_a_kill_mid_copy(broker, admin):
    create_topic(admin, "slow")
    values = produce(broker, "slow", 1500, size=1000)
    [(source, _, _, _)] = replicas(admin)[("slow", 0)]
    dest = other_dir(broker, source)
    def applied() -> int:
        # the broker logs each change it applies: heard of from ZooKeeper ("... with config:
        # {...}") or from the metadata log ("Updating broker 0 with new configuration : ...")
        return sum(1 for line in broker.output().splitlines()
                   if THROTTLE in line and "100000" in line and ("with config:" in line or "new configuration" in line))

    seen = applied()
    set_alter_log_dirs_throttle(broker, "100000")
    wait_until(lambda: applied() > seen, WAIT, "the throttle was not applied")
    try:
        assert admin.alter_replica_log_dirs({TopicPartitionReplica("slow", 0, 0): dest}) == {
            TopicPartitionReplica("slow", 0, 0): NoError}

        def copying() -> bool:
            future = [r for r in replicas(admin).get(("slow", 0), []) if r[3]]
            return bool(future) and future[0][0] == dest and future[0][1] > 0 and future[0][2] > 0

        wait_until(copying, WAIT, f"no copy under way: {replicas(admin).get(('slow', 0))}")
        broker.kill()
        futures = [n for n in os.listdir(dest) if n.startswith("slow-0.") and n.endswith("-future")]
        assert len(futures) == 1, os.listdir(dest)
        assert os.path.isdir(os.path.join(source, "slow-0"))

        broker.restart()
    finally:
        set_alter_log_dirs_throttle(broker, None)
    with KafkaAdminClientContext(broker) as after:
        wait_until(lambda: [r[0] for r in replicas(after).get(("slow", 0), [])] == [dest], WAIT,
                   f"slow-0 did not finish moving to {dest}: {replicas(after).get(('slow', 0))}\n{broker.tail()}")
    assert not [n for n in os.listdir(dest) if n.endswith("-future")]
    assert consume(broker, "slow") == values
    assert "Beginning/resuming copy of partition slow-0" in broker.output()


class KafkaAdminClientContext:
    def __init__(self, broker: BrokerProcess) -> None:
        self.client = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=30000)

    def __enter__(self) -> KafkaAdminClient:
        return self.client

    def __exit__(self, *exc: object) -> None:
        self.client.close()


def test_kafka_reassign_partitions_sh_moves_a_replica_to_the_log_dir_its_plan_names(broker, admin, tmp_path):
    create_topic(admin, "planned")
    values = produce(broker, "planned", 50)
    [(source, _, _, _)] = replicas(admin)[("planned", 0)]
    dest = other_dir(broker, source)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "planned", "partition": 0, "replicas": [0], "log_dirs": [dest]}]}))
    tool = [str(ROOT / "bin" / "kafka-reassign-partitions.sh"), "--bootstrap-server", broker.bootstrap]
    done = subprocess.run([*tool, "--execute", "--reassignment-json-file", str(plan),
                           "--replica-alter-log-dirs-throttle", "100000000"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-4:] == [
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle "
        "is removed.",
        "The replica-alter-dir throttle limit was set to 100000000 B/s",
        "Successfully started partition reassignment for planned-0",
        "Successfully started log directory move for: planned-0-0"]
    assert dynamic_broker_configs(admin) == {"replica.alter.log.dirs.io.max.bytes.per.second": "100000000"}
    wait_until(lambda: [r[0] for r in replicas(admin).get(("planned", 0), [])] == [dest], WAIT,
               f"planned-0 did not move to {dest}: {replicas(admin).get(('planned', 0))}")
    verified = subprocess.run([*tool, "--verify", "--reassignment-json-file", str(plan)], capture_output=True,
                              text=True, timeout=120)
    assert (verified.returncode, verified.stdout) == (0, (
        "Status of partition reassignment:\n"
        "Reassignment of partition planned-0 is complete.\n"
        "Reassignment of replica planned-0-0 completed successfully.\n"
        "Clearing broker-level throttles on broker 0\n"
        "Clearing topic-level throttles on topic planned\n")), verified.stderr
    assert dynamic_broker_configs(admin) == {}
    assert consume(broker, "planned") == values
