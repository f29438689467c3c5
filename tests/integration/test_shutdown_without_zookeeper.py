"""A broker whose ZooKeeper is gone still stops on SIGTERM, and loses nothing it acknowledged.

Controlled shutdown looks the controller up in ZooKeeper. With ZooKeeper stopped, each
attempt waits at most zookeeper.connection.timeout.ms for it, so the whole stop is bounded by
controlled.shutdown.max.retries x (zookeeper.connection.timeout.ms +
controlled.shutdown.retry.backoff.ms) plus the ordinary shutdown; the broker says why it
stopped without moving its leaderships. Started again with ZooKeeper back, it serves every
record it acknowledged (acks=all) to a kafka-python consumer.
"""
from __future__ import annotations

import signal
import subprocess

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from tests.integration.broker_harness import BrokerProcess, unique_chroot
from tests.zookeeper_harness import ZooKeeperServer

RETRIES = 2
BACKOFF_MS = 500
ZK_CONNECTION_TIMEOUT_MS = 3000
RECORDS = 200
TOPIC = "kept-without-zookeeper"


def test_sigterm_without_zookeeper_stops_within_the_bound_and_keeps_acknowledged_records(tmp_path):
    # A ZooKeeper of this test's own: it is stopped and started again.
    (tmp_path / "zookeeper").mkdir()
    zookeeper = ZooKeeperServer(tmp_path / "zookeeper").start()
    broker = BrokerProcess(tmp_path / "broker", zookeeper.connect_string, unique_chroot(), overrides={
        "controlled.shutdown.max.retries": str(RETRIES),
        "controlled.shutdown.retry.backoff.ms": str(BACKOFF_MS),
        "zookeeper.connection.timeout.ms": str(ZK_CONNECTION_TIMEOUT_MS),
        "zookeeper.session.timeout.ms": "6000",
        "num.partitions": "2",
    })
    try:
        broker.start()
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", retries=0)
        acknowledged = {}
        try:
            futures = [producer.send(TOPIC, f"value-{i}".encode(), key=f"key-{i}".encode()) for i in range(RECORDS)]
            for i, future in enumerate(futures):
                metadata = future.get(timeout=30)
                acknowledged[(metadata.partition, metadata.offset)] = f"value-{i}".encode()
        finally:
            producer.close()
        assert len(acknowledged) == RECORDS

        zookeeper.stop()
        process = broker.process
        process.send_signal(signal.SIGTERM)
        # The bound the configs give (each attempt waits for ZooKeeper, then backs off), with
        # a wide margin for the rest of the shutdown on a loaded machine: without the bound
        # the broker waits for ZooKeeper for ever.
        bound_s = RETRIES * (ZK_CONNECTION_TIMEOUT_MS + BACKOFF_MS) / 1000.0
        try:
            code = process.wait(timeout=bound_s + 60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError(f"broker did not stop without ZooKeeper:\n{broker.tail()}")
        finally:
            broker.process = None
        assert code == 0, broker.tail()
        output = broker.output()
        assert "ZooKeeper was not reachable within zookeeper.connection.timeout.ms" in output, broker.tail()
        assert "no leadership was moved off this broker" in output
        assert "shut down completed" in output

        zookeeper.start()
        broker.restart()
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                 enable_auto_commit=False, consumer_timeout_ms=20000)
        try:
            partitions = [TopicPartition(TOPIC, p) for p in range(2)]
            consumer.assign(partitions)
            consumer.seek_to_beginning()
            read = {}
            for record in consumer:
                read[(record.partition, record.offset)] = record.value
                if len(read) >= len(acknowledged):
                    break
        finally:
            consumer.close()
        assert {k: read.get(k) for k in acknowledged} == acknowledged
    finally:
        if broker.running:
            broker.kill()
        zookeeper.stop()
