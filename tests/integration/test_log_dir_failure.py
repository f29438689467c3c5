"""A broker process whose log dir fills up: a small tmpfs mounted for the test.

With its only log dir full, the broker does what Kafka 2.8 does: the first write that fails
takes the dir offline, every partition in it answers KAFKA_STORAGE_ERROR, and since no dir is
left the broker stops, logging "Shutdown broker because all log dirs in ... have failed", and
exits non-zero. A kafka-python producer filling the dir sees every one of its sends complete,
acknowledged or failed. The dir's files, copied to a roomier disk, bring the broker back with
every acknowledged record.

With two log dirs of which only the tmpfs one fills up, the broker keeps serving the other:
the controller hears of the failure through /log_dir_event_notification and takes the failed
partition offline (no leader), while a topic in the healthy dir, and topics created
afterwards, go on taking and serving records. In a three-broker cluster the failed
partition's leadership moves to another replica of its ISR instead, and a producer writing
to it loses none of the records it was told were written.

Mounting needs root (or CAP_SYS_ADMIN); where ``mount`` is refused the tests skip and say so.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaStorageError

from tests.integration.broker_harness import unique_chroot, wait_until

TMPFS_SIZE = "8m"
# 1 KiB records: 12 MiB of them overfill the 8 MiB tmpfs whatever the batching overhead
RECORD_SIZE = 1024
RECORDS = 12 * 1024
REQUEST_TIMEOUT_MS = 10000
# client-side bound on a send: the broker answers or goes away well within it. Sends still
# queued when the broker stops (or the partition goes offline) fail only when it runs out.
DELIVERY_TIMEOUT_MS = 12000
SHUTDOWN_MESSAGE = "Shutdown broker because all log dirs in"


def mount_tmpfs(path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None:
        pytest.skip("no mount command: a tmpfs log dir cannot be made here")
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(path)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here ({result.stderr.strip() or result.returncode}); "
                    "these tests need root or CAP_SYS_ADMIN")


def unmount(path) -> None:
    if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
        # still busy (a broker that outlived its test): detach it now, freed when released
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


@pytest.fixture
def tmpfs_dir(tmp_path):
    path = tmp_path / "tmpfs-logs"
    mount_tmpfs(path)
    try:
        yield path
    finally:
        unmount(path)


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def record_value(i: int) -> bytes:
    return f"{i:08d}".encode().ljust(RECORD_SIZE, b".")


def producer_for(bootstrap: str) -> KafkaProducer:
    # retries=0: a KAFKA_STORAGE_ERROR fails the send at once instead of being retried until the
    # delivery timeout (the idempotent producer needs retries, so it is off)
    return KafkaProducer(bootstrap_servers=bootstrap, acks="all", retries=0, enable_idempotence=False,
                         linger_ms=5, request_timeout_ms=REQUEST_TIMEOUT_MS,
                         delivery_timeout_ms=DELIVERY_TIMEOUT_MS, max_block_ms=DELIVERY_TIMEOUT_MS)


def send_all(producer: KafkaProducer, topic: str, count: int) -> list:
    futures = []
    for i in range(count):
        futures.append((i, producer.send(topic, value=record_value(i))))
    # Bounded: every send must be settled (acknowledged or failed) within the delivery timeout,
    # whatever the broker does; a send still open after it is the bug this test is about.
    wait_until(lambda: all(f.is_done for _, f in futures), DELIVERY_TIMEOUT_MS / 1000 + 60,
               f"{sum(1 for _, f in futures if not f.is_done)} of {count} sends never completed")
    return futures


def read_all(bootstrap: str, topic: str, partitions: int = 1) -> dict[tuple[int, int], bytes]:
    """Every record of the topic: (partition, offset) -> value."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        ends = consumer.end_offsets(tps)
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        got: dict[tuple[int, int], bytes] = {}
        deadline = time.monotonic() + 120
        while any(consumer.position(tp) < ends[tp] for tp in tps) and time.monotonic() < deadline:
            for tp, batch in consumer.poll(timeout_ms=5000).items():
                for record in batch:
                    got[(tp.partition, record.offset)] = record.value
        return got
    finally:
        consumer.close()


def test_full_log_dir_stops_the_broker_and_acknowledged_records_survive(broker_factory, tmpfs_dir, tmp_path):
    broker = broker_factory(overrides={"log.dirs": str(tmpfs_dir), "log.segment.bytes": str(1024 * 1024)})
    broker.start()
    create_topic(broker.bootstrap, "fill", 2)

    producer = producer_for(broker.bootstrap)
    try:
        futures = send_all(producer, "fill", RECORDS)
    finally:
        producer.close(timeout=10)
    acked = {(f.value.partition, f.value.offset): record_value(i) for i, f in futures if f.succeeded()}
    failures = [f.exception for _, f in futures if f.failed()]
    assert acked and failures, (len(acked), len(failures))

    # the broker stops by itself, with Kafka's message and a non-zero status
    wait_until(lambda: not broker.running, 90, f"the broker did not stop:\n{broker.tail()}")
    assert broker.stop() != 0
    output = broker.output()
    assert f"{SHUTDOWN_MESSAGE} {tmpfs_dir} have failed" in output, broker.tail(80)
    assert "Uncaught exception in scheduled task" not in output
    assert "[KafkaServer id=0] shut down completed" in output

    # the files, moved to a disk with room, bring every acknowledged record back
    roomy = tmp_path / "roomy-logs"
    shutil.copytree(tmpfs_dir, roomy, symlinks=True)
    broker.overrides["log.dirs"] = str(roomy)
    broker.write_config()
    broker.restart()
    stored = read_all(broker.bootstrap, "fill", 2)
    missing = [key for key, value in acked.items() if stored.get(key) != value]
    assert not missing, f"{len(missing)} acknowledged records lost, e.g. {sorted(missing)[:5]}"

    # and the broker takes records again
    producer = producer_for(broker.bootstrap)
    try:
        assert producer.send("fill", value=b"after", partition=0).get(timeout=30).offset >= 0
    finally:
        producer.close(timeout=10)


def test_one_failed_log_dir_of_two_leaves_the_other_serving(broker_factory, tmpfs_dir, tmp_path):
    healthy_dir = tmp_path / "healthy-logs"
    # new logs go to the dir holding fewest, the first listed on a tie: "fill" lands on the tmpfs
    broker = broker_factory(overrides={"log.dirs": f"{tmpfs_dir},{healthy_dir}",
                                       "log.segment.bytes": str(1024 * 1024)})
    broker.start()
    create_topic(broker.bootstrap, "fill")
    wait_until(lambda: (tmpfs_dir / "fill-0").is_dir(), 30, "fill-0 was not created on the tmpfs")
    create_topic(broker.bootstrap, "steady")
    wait_until(lambda: (healthy_dir / "steady-0").is_dir(), 30, "steady-0 was not created in the healthy dir")

    producer = producer_for(broker.bootstrap)
    try:
        futures = send_all(producer, "fill", RECORDS)
        # the write that found the disk full is answered, with the storage error
        assert any(isinstance(f.exception, KafkaStorageError) for _, f in futures if f.failed())
        assert broker.running, broker.tail(80)

        # the controller took the failed replica offline: the partition has no leader
        zk = broker.zk()
        try:
            def leader_of_fill() -> int:
                data, _ = zk.get("/brokers/topics/fill/partitions/0/state")
                return json.loads(data)["leader"]

            wait_until(lambda: leader_of_fill() == -1, 60, "the failed partition kept its leader")
        finally:
            zk.stop()
            zk.close()

        # the other dir still serves, and new topics get a leader there
        steady = [producer.send("steady", value=record_value(i)) for i in range(100)]
        assert [f.get(timeout=30).offset for f in steady] == list(range(100))
        create_topic(broker.bootstrap, "later")
        assert producer.send("later", value=b"x").get(timeout=30).offset == 0
    finally:
        producer.close(timeout=10)
    assert (healthy_dir / "later-0").is_dir()
    assert len(read_all(broker.bootstrap, "steady")) == 100
    output = broker.output()
    assert f"Logs for partitions fill-0 are offline due to failure on log directory {tmpfs_dir}" in output
    assert SHUTDOWN_MESSAGE not in output
    assert "Uncaught exception in scheduled task" not in output
    assert broker.stop() == 0


def test_a_failed_log_dir_of_a_replicated_broker_moves_its_leaderships_and_loses_nothing(broker_factory, tmpfs_dir,
                                                                                           tmp_path):
    """Three brokers; broker 0 has the tmpfs and a healthy dir. Filling the tmpfs takes only the
    partition in it offline on broker 0: another replica of the ISR leads it, an idempotent
    acks=all producer carries on there and every record it was told is written is there; broker
    0 keeps leading the partition in its healthy dir."""
    from tests.integration.replicated_cluster import make_replicated_cluster

    cluster = make_replicated_cluster(broker_factory, unique_chroot("log-dir-failure"),
                                      **{"log.segment.bytes": str(1024 * 1024)})
    healthy_dir = tmp_path / "healthy-logs"
    b0 = cluster.broker(0)
    b0.overrides["log.dirs"] = f"{tmpfs_dir},{healthy_dir}"
    b0.write_config()
    cluster.start()
    try:
        # the first partition goes to the first of the two empty dirs, the next to the other
        cluster.create_topic("fill", {0: [0, 1, 2]})
        wait_until(lambda: (tmpfs_dir / "fill-0").is_dir(), 30, "fill-0 was not created on the tmpfs")
        cluster.create_topic("steady", {0: [0, 1, 2]})
        wait_until(lambda: (healthy_dir / "steady-0").is_dir(), 30, "steady-0 was not created in the healthy dir")
        cluster.wait_fully_replicated("fill", 1)
        cluster.wait_fully_replicated("steady", 1)

        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), acks="all", enable_idempotence=True,
                                 linger_ms=5, request_timeout_ms=REQUEST_TIMEOUT_MS, delivery_timeout_ms=120000,
                                 max_block_ms=120000)
        try:
            futures = []
            for i in range(RECORDS):
                futures.append((i, producer.send("fill", value=record_value(i))))
            wait_until(lambda: all(f.is_done for _, f in futures), 180,
                       f"{sum(1 for _, f in futures if not f.is_done)} of {RECORDS} sends never completed")
            acked = {f.value.offset: record_value(i) for i, f in futures if f.succeeded()}
            # the producer was never told a write failed: it moved to the new leader
            assert len(acked) == RECORDS, [f.exception for _, f in futures if f.failed()][:3]

            state = cluster.wait_state("fill", lambda s: s["leader"] in (1, 2) and 0 not in s["isr"],
                                       "fill-0 moved to another replica of the ISR")
            assert b0.running, b0.tail(80)
            assert cluster.state("steady")["leader"] == 0
            steady = [producer.send("steady", value=record_value(i)) for i in range(50)]
            assert [f.get(timeout=60).offset for f in steady] == list(range(50))
        finally:
            producer.close(timeout=10)

        stored = read_all(cluster.broker(state["leader"]).bootstrap, "fill")
        missing = [offset for offset, value in acked.items() if stored.get((0, offset)) != value]
        assert not missing, f"{len(missing)} acknowledged records lost, e.g. {sorted(missing)[:5]}"
        output = b0.output()
        assert f"Logs for partitions fill-0 are offline due to failure on log directory {tmpfs_dir}" in output
        assert SHUTDOWN_MESSAGE not in output
    finally:
        for b in cluster.brokers:
            if b.running:
                b.stop()
        cluster.close()
