"""Brokers that hold more than a thousand segment files serve again after a clean restart.

Every segment keeps its .log open, so once such a broker has loaded its logs every new
descriptor it opens (the controller's connection to its own broker, client connections) is
numbered above 1023, beyond what select() can wait on. These tests restart a real broker
process with 2,000 partitions, and with one partition of 1,200 segments, and check that every
partition has a leader again and every record produced before the restart is read back by a
kafka-python consumer. They also check the descriptors the broker holds (one per segment) and
that the broker raises its soft descriptor limit at startup.

The two large tests carry the ``scale`` marker: ``bin/run-tests.sh -m scale tests/integration``.
"""
from __future__ import annotations

import os
import pathlib
import resource
import time
from typing import Iterable

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient

from tests.integration.broker_harness import wait_until

TOPICS = 20
PARTITIONS_PER_TOPIC = 100


def create_topics(broker, topics: dict[str, dict]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=120_000)
    try:
        admin.create_topics(topics, timeout_ms=120_000)
    finally:
        admin.close()


def partitions_without_leader(broker, topics: Iterable[str]) -> list[tuple[str, int]]:
    """Partitions whose metadata (kafka-python's admin client) names no live leader."""
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=60_000)
    try:
        described = admin.describe_topics(list(topics))
    finally:
        admin.close()
    missing = []
    for topic in described:
        if topic["error_code"] != 0:
            missing.append((topic["name"], -1))
            continue
        for partition in topic["partitions"]:
            if partition["error_code"] != 0 or partition["leader_id"] != broker.broker_id:
                missing.append((topic["name"], partition["partition_index"]))
    return missing


def wait_for_leaders(broker, topics: list[str], expected_partitions: int, timeout: float) -> None:
    def all_led() -> bool:
        missing = partitions_without_leader(broker, topics)
        return not missing

    wait_until(all_led, timeout, f"partitions still without a leader: "
               f"{partitions_without_leader(broker, topics)[:20]}", interval=0.5)
    assert count_partitions(broker, topics) == expected_partitions


def count_partitions(broker, topics: list[str]) -> int:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=60_000)
    try:
        return sum(len(t["partitions"]) for t in admin.describe_topics(topics))
    finally:
        admin.close()


def produce(broker, records: list[tuple[str, int, bytes]], **producer_config) -> dict[TopicPartition, list[bytes]]:
    """Send every (topic, partition, value); returns the values acknowledged per partition."""
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1, **producer_config)
    try:
        futures = [(TopicPartition(t, p), v, producer.send(t, value=v, partition=p)) for t, p, v in records]
        producer.flush(timeout=120)
        acknowledged: dict[TopicPartition, list[bytes]] = {}
        for tp, value, future in futures:
            future.get(timeout=60)
            acknowledged.setdefault(tp, []).append(value)
        return acknowledged
    finally:
        producer.close()


def read_back(broker, expected: dict[TopicPartition, list[bytes]], timeout: float) -> dict[TopicPartition, list[bytes]]:
    """Every record of the given partitions from their beginning, in offset order."""
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False,
                             request_timeout_ms=60_000, max_partition_fetch_bytes=1024 * 1024)
    try:
        consumer.assign(list(expected))
        consumer.seek_to_beginning()
        wanted = sum(len(v) for v in expected.values())
        received: dict[TopicPartition, list[bytes]] = {tp: [] for tp in expected}
        got = 0
        deadline = time.monotonic() + timeout
        # Bounded in polls as well as in time: each poll returns within its own timeout.
        for _ in range(20_000):
            if got >= wanted or time.monotonic() > deadline:
                break
            for tp, records in consumer.poll(timeout_ms=1000, max_records=5000).items():
                received[tp].extend(r.value for r in records)
                got += len(records)
        return received
    finally:
        consumer.close()


def broker_descriptors(pid: int, under: pathlib.Path) -> list[str]:
    """Targets of the broker process's open descriptors that lie under ``under``."""
    root = os.path.realpath(under) + os.sep
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:  # closed between the listing and the readlink
            continue
        if target.startswith(root):
            found.append(target)
    return found


def descriptor_limits(pid: int) -> tuple[int, int]:
    for line in pathlib.Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return tuple(resource.RLIM_INFINITY if v == "unlimited" else int(v) for v in (soft, hard))
    raise AssertionError(f"no 'Max open files' in /proc/{pid}/limits")


def login_shell_soft_limit() -> None:
    """The soft limit most shells start with: too low for 2,000 segments unless raised."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))


@pytest.mark.scale
def test_broker_with_2000_partitions_serves_again_after_a_clean_restart(broker_factory):
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 4096:
        pytest.skip(f"hard descriptor limit {hard} is too low for 2,000 segments and their sockets")
    timings: dict[str, float] = {}
    # Started, both times, from a shell's soft limit of 1024: it serves only if it raises it.
    broker = broker_factory(preexec_fn=login_shell_soft_limit)
    broker.start()
    topics = [f"scale-{i:02d}" for i in range(TOPICS)]
    total = TOPICS * PARTITIONS_PER_TOPIC

    started = time.monotonic()
    create_topics(broker, {t: {"num_partitions": PARTITIONS_PER_TOPIC, "replication_factor": 1} for t in topics})
    wait_for_leaders(broker, topics, total, timeout=120)
    timings["create 2000 partitions"] = time.monotonic() - started

    # A few records in every tenth partition of each topic.
    records = [(t, p, f"{t}/{p}/{i}".encode()) for t in topics for p in range(0, PARTITIONS_PER_TOPIC, 10)
               for i in range(5)]
    acknowledged = produce(broker, records)
    assert sum(len(v) for v in acknowledged.values()) == len(records)

    assert broker.stop() == 0, broker.tail()
    assert len(list(broker.log_dir.glob("scale-*/*.log"))) == total

    started = time.monotonic()
    broker.start(timeout=120)
    timings["restart until started"] = time.monotonic() - started
    wait_for_leaders(broker, topics, total, timeout=120)
    timings["restart until every partition led"] = time.monotonic() - started

    # One descriptor per segment (its .log): 2,000, so every socket opened since is above 1023.
    open_files = broker_descriptors(broker.process.pid, broker.log_dir)
    segment_files = [p for p in open_files if p.endswith(".log")]
    assert len(segment_files) >= total
    assert not [p for p in open_files if p.endswith((".index", ".timeindex"))]

    started = time.monotonic()
    assert read_back(broker, acknowledged, timeout=120) == acknowledged
    timings["read back"] = time.monotonic() - started
    print("timings (s):", {k: round(v, 1) for k, v in timings.items()})


@pytest.mark.scale
def test_partition_with_1200_segments_serves_again_after_a_clean_restart(broker_factory):
    broker = broker_factory()
    broker.start()
    topic = "many-segments"
    # segment.bytes 1024 and one 600-byte record per batch: every batch rolls a new segment.
    create_topics(broker, {topic: {"num_partitions": 1, "replication_factor": 1,
                                   "configs": {"segment.bytes": "1024"}}})
    wait_for_leaders(broker, [topic], 1, timeout=60)
    values = [f"{i:06d}".encode() + b"v" * 594 for i in range(1250)]
    acknowledged = produce(broker, [(topic, 0, v) for v in values], batch_size=700, linger_ms=0)
    segments = len(list(broker.log_dir.glob(f"{topic}-0/*.log")))
    assert segments >= 1200

    assert broker.stop() == 0, broker.tail()
    broker.start(timeout=120)
    wait_for_leaders(broker, [topic], 1, timeout=120)

    open_files = broker_descriptors(broker.process.pid, broker.log_dir / f"{topic}-0")
    assert sorted(os.path.splitext(p)[1] for p in open_files) == [".log"] * segments

    tp = TopicPartition(topic, 0)
    assert read_back(broker, acknowledged, timeout=120)[tp] == values


def test_broker_raises_its_soft_descriptor_limit_to_the_hard_limit(broker_factory):
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 1024:
        pytest.skip(f"hard descriptor limit {hard} leaves nothing to raise")

    def low_soft_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))

    broker = broker_factory(preexec_fn=low_soft_limit)
    broker.start()
    soft_now, hard_now = descriptor_limits(broker.process.pid)
    assert hard_now == hard or hard == resource.RLIM_INFINITY
    assert soft_now > 1024
    if hard != resource.RLIM_INFINITY:
        assert soft_now == hard
    assert (f"Open file descriptor limit: soft {soft_now}, hard {hard_now} (soft limit raised from 1024)"
            in broker.output())
