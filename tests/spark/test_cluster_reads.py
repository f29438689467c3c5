"""Reading the log dirs of several brokers: every partition once, from one replica.

A three-broker cluster with RF=1 topics spreads their partitions over the brokers: given all
three brokers' log dirs, batch and streaming reads see every record once. Replicas (the same
partition in the dirs of two brokers) are made by copying a partition directory into another
broker's log dir, one copy cut short: the read takes each partition from the replica with the
highest checkpointed high watermark, and never takes the tail from one that is behind.

An RF=3 topic whose leader is killed mid-stream: tests/spark/test_cluster_failover.py.
"""
from __future__ import annotations

import json
import os
import shutil

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile
from kafka_py.spark.log_dir_planner import LogDirPlanner
from kafka_py.spark.options import KafkaLogOptions, KafkaLogOptionsException
from kafka_py.spark.summary_job import describe_replicas, format_replica_table, run_summary
from tests.integration.broker_harness import BrokerProcess, unique_chroot, wait_until
from tests.spark.conftest import spark_script_env
from tests.spark.log_builder import write_partition
from tests.spark.test_streaming import BatchCollector, run_available_now

WAIT_S = 180


@pytest.fixture(scope="module")
def three_brokers(zookeeper, tmp_path_factory):
    chroot = unique_chroot()
    base = tmp_path_factory.mktemp("three-brokers")
    brokers = [BrokerProcess(base / f"broker-{i}", zookeeper.connect_string, chroot, broker_id=i,
                             overrides={"replica.high.watermark.checkpoint.interval.ms": "200"})
               for i in range(3)]
    for b in brokers:
        b.start()
    yield brokers
    for b in brokers:
        if b.running:
            b.stop()


def checkpointed(brokers, ends: dict) -> bool:
    seen = {}
    for b in brokers:
        path = b.log_dir / "replication-offset-checkpoint"
        if path.exists():
            seen.update(OffsetCheckpointFile(str(path)).read())
    return all(seen.get(tp, -1) >= end for tp, end in ends.items())


def test_rf1_partitions_spread_over_three_brokers_are_read_whole(spark, three_brokers, tmp_path):
    bootstrap = ",".join(b.bootstrap for b in three_brokers)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("spread", 6, 1, topic_configs={"retention.ms": "-1"})])
    admin.close()
    wait_until(lambda: sum(1 for b in three_brokers for n in os.listdir(b.log_dir) if n.startswith("spread-")) == 6,
               60, "the topic's partitions never appeared")
    owners = {b.broker_id for b in three_brokers for n in os.listdir(b.log_dir) if n.startswith("spread-")}
    assert len(owners) > 1, "the partitions did not spread over brokers"
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    acked = [producer.send("spread", value=b"r%d" % i, partition=i % 6).get(timeout=30) for i in range(600)]
    producer.close()
    expected = sorted((m.topic, m.partition, m.offset) for m in acked)
    ends = {TopicPartition("spread", p): 100 for p in range(6)}
    wait_until(lambda: checkpointed(three_brokers, ends), 60, "high watermarks never checkpointed")
    dirs = [str(b.log_dir) for b in three_brokers]

    rows = spark.read.format("kafka-log").option("subscribe", "spread").load(dirs).select("topic", "partition",
                                                                                       "offset").collect()
    assert sorted(tuple(r) for r in rows) == expected

    for options in ({}, {"kafka.bootstrap.servers": bootstrap}):
        # readStream.load takes one path; several go in the paths option.
        reader = spark.readStream.format("kafka-log").option("subscribe", "spread").option("paths", json.dumps(dirs))
        for k, v in options.items():
            reader = reader.option(k, v)
        collector = run_available_now(spark, reader.load(), tmp_path / f"cp-{len(options)}", BatchCollector())
        assert sorted(collector.rows) == expected

    summaries = run_summary(spark, dirs, topics=["spread"])
    assert [(s.partition, s.records) for s in summaries] == [(p, 100) for p in range(6)]
    table = format_replica_table(describe_replicas(dirs, topics=["spread"])).splitlines()
    assert table[0].split() == ["topic", "partition", "broker", "0", "end/hw", "broker", "1", "end/hw",
                                "broker", "2", "end/hw"]
    for line in table[2:]:
        cells = line.split()
        assert cells[0] == "spread" and sorted(cells[2:]) == ["-", "-", "100/100"]


# ---------------------------------------------------------------------------- copied replicas

def broker_dir(root, broker_id: int):
    d = root / f"broker-{broker_id}"
    d.mkdir(parents=True)
    (d / "meta.properties").write_text(f"version=0\nbroker.id={broker_id}\ncluster.id=copied\n")
    return d


def set_high_watermarks(log_dir, offsets: dict) -> None:
    OffsetCheckpointFile(str(log_dir / "replication-offset-checkpoint")).write(
        {TopicPartition(t, p): o for (t, p), o in offsets.items()})


def cut_last_batches(partition_dir, written, keep_records: int) -> None:
    """Truncate a copy so that it holds only its first ``keep_records`` records (a follower behind)."""
    kept = [b for b in written.batches if b.last_offset < keep_records]
    last = kept[-1]
    segment = os.path.join(partition_dir, os.path.basename(last.file))
    with open(segment, "r+b") as f:
        f.truncate(last.position + last.size)
    for name in os.listdir(partition_dir):
        if name.endswith(".log") and int(name[:-4]) > last.base_offset:
            os.unlink(os.path.join(partition_dir, name))
            index = os.path.join(partition_dir, name[:-4] + ".index")
            if os.path.exists(index):
                os.unlink(index)


@pytest.fixture
def replicas(tmp_path):
    """t-0 on brokers 0 (whole, hw 120) and 1 (cut to 80, hw 80); u-0 on 1 (whole) and 2 (cut)."""
    b0, b1, b2 = broker_dir(tmp_path, 0), broker_dir(tmp_path, 1), broker_dir(tmp_path, 2)
    t = write_partition(str(b0), "t", 0, [10] * 12, segment_bytes=2000)
    shutil.copytree(b0 / "t-0", b1 / "t-0")
    cut_last_batches(b1 / "t-0", t, 80)
    u = write_partition(str(b1), "u", 0, [5] * 10, segment_bytes=800, seed=3)
    shutil.copytree(b1 / "u-0", b2 / "u-0")
    cut_last_batches(b2 / "u-0", u, 20)
    set_high_watermarks(b0, {("t", 0): 120})
    set_high_watermarks(b1, {("t", 0): 80, ("u", 0): 50})
    set_high_watermarks(b2, {("u", 0): 20})
    return (b0, b1, b2), t, u


def test_copied_replicas_are_read_once_from_the_most_advanced(spark, replicas):
    (b0, b1, b2), t, u = replicas
    dirs = [str(b0), str(b1), str(b2)]
    chosen = LogDirPlanner(dirs).chosen_logs(KafkaLogOptions.parse({"paths": ",".join(dirs)}))
    assert chosen[TopicPartition("t", 0)].broker_id == 0
    assert chosen[TopicPartition("u", 0)].broker_id == 1
    rows = spark.read.format("kafka-log").load(dirs).select("topic", "offset", "value").collect()
    expected = [("t", o, v) for o, _, v, _, _ in t.rows()] + [("u", o, v) for o, _, v, _, _ in u.rows()]
    assert sorted((r["topic"], r["offset"], None if r["value"] is None else bytes(r["value"])) for r in rows) \
        == sorted(expected)


def test_a_replica_behind_the_wanted_end_is_never_read_for_the_tail(replicas):
    (b0, b1, _), _, _ = replicas
    # Broker 1 claims the higher high watermark, but its log stops at 80.
    set_high_watermarks(b1, {("t", 0): 125, ("u", 0): 50})
    dirs = [str(b0), str(b1)]
    planner = LogDirPlanner(dirs)
    for ending in ("latest", '{"t": {"0": 100}}'):
        options = KafkaLogOptions.parse({"paths": ",".join(dirs), "subscribe": "t", "endingOffsets": ending,
                                         "committedOnly": "true"})
        assert planner.chosen_logs(options)[TopicPartition("t", 0)].broker_id == 0
    # A range that ends within what broker 1 holds may come from it.
    options = KafkaLogOptions.parse({"paths": ",".join(dirs), "subscribe": "t", "endingOffsets": '{"t": {"0": 50}}'})
    assert planner.chosen_logs(options)[TopicPartition("t", 0)].broker_id == 1


def test_the_leader_is_preferred_when_the_cluster_names_it(replicas):
    from kafka_py.spark.replicas import choose_replica

    (b0, b1, _), _, _ = replicas
    planner = LogDirPlanner([str(b0), str(b1)])
    found = planner.replica_logs()
    planner.describe([r for rs in found.values() for r in rs])
    t0 = found[TopicPartition("t", 0)]
    assert choose_replica(t0).broker_id == 0
    assert choose_replica(t0, leader=1, from_offset=0, until_offset=80).broker_id == 1
    # The leader's files stop before the end wanted: another replica has it.
    assert choose_replica(t0, leader=1, from_offset=0, until_offset=120).broker_id == 0


def test_one_partition_twice_in_the_dirs_of_one_broker_is_refused(tmp_path):
    a = broker_dir(tmp_path / "a", 4)
    b = tmp_path / "b"
    b.mkdir()
    (b / "meta.properties").write_text("version=0\nbroker.id=4\n")
    write_partition(str(a), "t", 0, [3])
    write_partition(str(b), "t", 0, [3])
    with pytest.raises(KafkaLogOptionsException, match="both of broker 4"):
        LogDirPlanner([str(a), str(b)]).replica_logs()


def test_a_replica_that_disappears_mid_read_is_data_loss_never_a_wrong_row(replicas):
    from kafka_py.spark.kafka_log_data_source import KafkaLogDataSource, kafka_schema
    from kafka_py.spark.segment_reader import KafkaLogDataLossException

    (b0, b1, b2), _, _ = replicas
    dirs = ",".join(str(d) for d in (b0, b1, b2))
    for fail in ("true", "false"):
        reader = KafkaLogDataSource({"paths": dirs, "subscribe": "t", "failOnDataLoss": fail}).reader(kafka_schema())
        slices = reader.partitions()
        assert {p.value.file.split("/broker-")[1][0] for p in slices} == {"0"}
        moved = b0.parent / f"t-0-moved-{fail}"
        shutil.move(str(b0 / "t-0"), str(moved))
        try:
            if fail == "true":
                with pytest.raises(KafkaLogDataLossException, match="no longer exists"):
                    for p in slices:
                        list(reader.read(p))
            else:
                assert [b for p in slices for b in reader.read(p)] == []
        finally:
            shutil.move(str(moved), str(b0 / "t-0"))


def test_the_summary_script_shows_replicas_side_by_side(replicas):
    import subprocess

    (b0, b1, b2), _, _ = replicas
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run(
        [os.path.join(root, "bin", "kafka-log-summary.sh"), "--log-dir", str(b0), "--log-dir", str(b1),
         "--log-dir", str(b2), "--master", "local[1]", "--progress", "none",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.host=127.0.0.1"],
        cwd=root, env=spark_script_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].split()[:3] == ["topic", "partition", "records"]
    assert lines[2].split()[:3] == ["t", "0", "120"]
    assert lines[3].split()[:3] == ["u", "0", "50"]
    at = lines.index("replicas (log end offset / checkpointed high watermark):")
    assert lines[at + 1].split() == ["topic", "partition", "broker", "0", "end/hw", "broker", "1", "end/hw",
                                     "broker", "2", "end/hw"]
    assert lines[at + 3].split() == ["t", "0", "120/120", "80/80", "-"]
    assert lines[at + 4].split() == ["u", "0", "-", "50/50", "20/20"]
