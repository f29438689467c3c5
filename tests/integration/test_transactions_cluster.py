"""Transactions on a three-broker cluster: __transaction_state with replication factor 3
(min.insync.replicas 2), the broker hosting the transaction coordinator killed with SIGKILL
after EndTxn but before the markers could be written, the coordinator failing over to
another broker, the transaction completed after recovery. Every wait is bounded; nothing
is timed."""
from __future__ import annotations

import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from tests.integration.broker_harness import unique_chroot, wait_until
from tests.integration.replicated_cluster import WAIT, make_replicated_cluster

TXN_PROPS = {
    "transaction.state.log.num.partitions": "1",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
}


@pytest.fixture
def cluster(broker_factory):
    c = make_replicated_cluster(broker_factory, unique_chroot("txn-cluster"), **TXN_PROPS).start()
    yield c
    c.close()


def read_committed(bootstrap: list[str], topic: str) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed",
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        end = consumer.end_offsets([tp])[tp]
        values: list[bytes] = []
        deadline = time.monotonic() + WAIT
        while consumer.position(tp) < end:
            assert time.monotonic() < deadline
            for records in consumer.poll(200).values():
                values.extend(r.value for r in records)
        return sorted(values)
    finally:
        consumer.close()


def test_coordinator_killed_between_end_txn_and_markers_fails_over_and_completes(cluster):
    controller = cluster.wait_controller()
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), transactional_id="failover-1")
    producer.init_transactions()  # creates __transaction_state (RF 3) and finds its coordinator
    cluster.wait_fully_replicated("__transaction_state", 1)
    coordinator = cluster.state("__transaction_state")["leader"]
    # the data partition's only replica is on a broker that is neither the coordinator nor, if
    # possible, the controller; the third broker will take the coordinator over
    data_broker = next(b for b in (0, 1, 2) if b not in (coordinator, controller)) \
        if controller != coordinator else next(b for b in (0, 1, 2) if b != coordinator)
    survivor = next(b for b in (0, 1, 2) if b not in (coordinator, data_broker))
    topic = "txn-failover"
    cluster.create_topic(topic, {0: [data_broker]})

    producer.begin_transaction()
    for i in range(5):
        producer.send(topic, b"failover-%d" % i, partition=0)
    producer.flush()
    # The data partition goes offline: its markers cannot be written until it is back.
    cluster.broker(data_broker).kill()
    cluster.wait_state("__transaction_state", lambda s: data_broker not in s["isr"],
                       "the killed broker left the ISR of __transaction_state")
    cluster.wait_state(topic, lambda s: s["leader"] == -1, "the data partition is offline")
    producer.commit_transaction()  # PrepareCommit is replicated to the coordinator and the survivor
    producer.close(timeout=5)

    # The coordinator dies with the markers still pending; the survivor leads __transaction_state.
    cluster.broker(coordinator).kill()
    cluster.wait_state("__transaction_state", lambda s: s["leader"] == survivor,
                       "the survivor took the coordinator over")
    # Recovery: the data partition comes back, and the new coordinator (having loaded the
    # PrepareCommit) writes the markers and completes the transaction.
    cluster.broker(data_broker).start()
    cluster.wait_state(topic, lambda s: s["leader"] == data_broker, "the data partition is back")
    expected = sorted(b"failover-%d" % i for i in range(5))
    wait_until(lambda: read_committed(cluster.bootstrap(), topic) == expected, WAIT,
               "the transaction was not completed by the new coordinator")
    cluster.broker(coordinator).start()
    cluster.wait_fully_replicated("__transaction_state", 1)

    # The transactional id goes on with the new coordinator: the next instance is fenced in and
    # commits.
    successor = KafkaProducer(bootstrap_servers=cluster.bootstrap(), transactional_id="failover-1")
    try:
        successor.init_transactions()
        successor.begin_transaction()
        successor.send(topic, b"after-failover", partition=0)
        successor.commit_transaction()
    finally:
        successor.close(timeout=5)
    assert read_committed(cluster.bootstrap(), topic) == sorted(expected + [b"after-failover"])
