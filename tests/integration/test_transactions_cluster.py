"""Transactions on a three-broker cluster: __transaction_state with replication factor 3
(min.insync.replicas 2), the broker hosting the transaction coordinator killed with SIGKILL
after EndTxn but before the markers could be written, the coordinator failing over to
another broker, the transaction completed after recovery; and transaction verification
between a partition leader and a coordinator on another broker (refused writes, the
coordinator down, real producers). Every wait is bounded; nothing is timed."""
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


def _req(api, version: int, **fields):
    from kafka_py.clients.common.protocol.messages import request_schema
    from kafka_py.clients.common.protocol.entities import build_entity

    return build_entity(request_schema(api, version), fields)


@pytest.fixture
def rf1_cluster(broker_factory):
    """__transaction_state on one broker only: killing it leaves the ids without a coordinator."""
    c = make_replicated_cluster(broker_factory, unique_chroot("txn-verify"), **{
        "transaction.state.log.num.partitions": "1", "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1"}).start()
    yield c
    c.close()


def test_a_write_outside_the_transaction_is_refused_when_another_broker_coordinates(rf1_cluster):
    """Transaction verification (docs/transactions.md): the leader of a partition the producer
    never added asks the coordinator on another broker (DescribeTransactions) and refuses the
    transactional batch, appending nothing; read_committed consumers are not held. Later
    batches of a transaction already open on the partition need no question (they go in with
    the coordinator down); a first batch while the coordinator is down gets a retriable error.
    Real kafka-python and confluent-kafka transactional producers work across the brokers."""
    from confluent_kafka import Producer as CKProducer

    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.errors import Errors
    from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
    from tests.integration.broker_harness import RawClient

    cluster = rf1_cluster
    tid = "outside-1"
    found: list = []

    def coordinator_found() -> bool:
        with RawClient(cluster.brokers[0].port) as client:
            response = client.request(ApiKeys.FIND_COORDINATOR, 3,
                                      _req(ApiKeys.FIND_COORDINATOR, 3, key=tid, key_type=1))
        if response.error_code == 0:
            found.append(response.node_id)
        return bool(found)

    wait_until(coordinator_found, WAIT, "no transaction coordinator")
    coordinator = cluster.broker(found[0])
    leader = next(b for b in cluster.brokers if b.broker_id != found[0])
    topic = "txn-outside"
    cluster.create_topic(topic, {0: [leader.broker_id], 1: [leader.broker_id]})
    for p in (0, 1):
        cluster.wait_state(topic, lambda s: s["leader"] == leader.broker_id, f"partition {p} led", partition=p)
    # the raw produces below do not retry: the leader must have taken the leadership itself
    wait_until(lambda: leader.leads(topic, [0, 1]), WAIT, f"broker {leader.broker_id} never led {topic}")

    def call(broker, api, version, **fields):
        with RawClient(broker.port) as client:
            return client.request(api, version, _req(api, version, **fields))

    def init_producer_id():
        init: list = []

        def initialised() -> bool:
            response = call(coordinator, ApiKeys.INIT_PRODUCER_ID, 4, transactional_id=tid,
                            transaction_timeout=60000)
            if response.error_code == 0:
                init.append((response.producer_id, response.producer_epoch))
            return bool(init)

        wait_until(initialised, WAIT, "InitProducerId never succeeded")
        return init[0]

    pid, epoch = init_producer_id()

    def add(partition: int) -> int:
        response = call(coordinator, ApiKeys.ADD_PARTITIONS_TO_TXN, 3, v3_and_below_transactional_id=tid,
                        v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
                        v3_and_below_topics=[{"name": topic, "partitions": [partition]}])
        return int(response.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code)

    def end_txn() -> int:
        return int(call(coordinator, ApiKeys.END_TXN, 3, transactional_id=tid, producer_id=pid,
                        producer_epoch=epoch, committed=True).error_code)

    def produce(partition: int, value: bytes, sequence: int, producer_epoch: int | None = None):
        batch = build_batch([SimpleRecord(None, value, 1_700_000_000_000)], producer_id=pid,
                            producer_epoch=epoch if producer_epoch is None else producer_epoch,
                            base_sequence=sequence, is_transactional=True)
        response = call(leader, ApiKeys.PRODUCE, 8, transactional_id=tid, acks=-1, timeout=30000,
                        topic_data=[{"name": topic, "partition_data": [{"index": partition, "records": batch}]}])
        answer = response.responses[0].partition_responses[0]
        return Errors.for_code(int(answer.error_code)), answer.error_message

    def ends(isolation: str) -> list[int]:
        consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap(), isolation_level=isolation)
        try:
            tps = [TopicPartition(topic, p) for p in (0, 1)]
            found_ends = consumer.end_offsets(tps)
            return [found_ends[tp] for tp in tps]
        finally:
            consumer.close()

    def committed_values() -> list[bytes]:
        consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap(), isolation_level="read_committed",
                                 auto_offset_reset="earliest", enable_auto_commit=False)
        try:
            tps = [TopicPartition(topic, p) for p in (0, 1)]
            consumer.assign(tps)
            end = consumer.end_offsets(tps)
            values: list[bytes] = []
            deadline = time.monotonic() + WAIT
            while any(consumer.position(tp) < end[tp] for tp in tps):
                assert time.monotonic() < deadline, "read_committed consumer stuck"
                for records in consumer.poll(200).values():
                    values.extend(r.value for r in records)
            return sorted(values)
        finally:
            consumer.close()

    # partition 1 added, partition 0 not: the leader asks the coordinator on the other broker
    assert add(1) == 0
    assert produce(1, b"inside", 0) == (Errors.NONE, None)
    assert produce(0, b"outside", 0) == (Errors.INVALID_TXN_STATE, "Partition was not added to the transaction")
    assert end_txn() == 0
    # nothing went to partition 0; both partitions' LSOs are their ends, no consumer waits
    wait_until(lambda: ends("read_committed") == [0, 2], WAIT, f"LSOs {ends('read_committed')}")
    assert ends("read_uncommitted") == [0, 2]
    assert committed_values() == [b"inside"]

    # a fenced epoch is told so by the coordinator
    old_epoch = epoch
    pid, epoch = init_producer_id()
    assert epoch == old_epoch + 1
    assert produce(0, b"fenced", 0, producer_epoch=old_epoch)[0] is Errors.INVALID_PRODUCER_EPOCH

    # a transaction open on partition 1: its later batches need no question, even with the
    # coordinator gone; a first batch on partition 0 cannot be verified and is retriable
    wait_until(lambda: add(1) == 0, WAIT, "partition 1 never added")
    assert produce(1, b"second-0", 0) == (Errors.NONE, None)
    coordinator.kill()
    assert produce(1, b"second-1", 1) == (Errors.NONE, None)
    error, message = produce(0, b"unverifiable", 0)
    assert error is Errors.NOT_ENOUGH_REPLICAS and error.retriable, (error, message)
    assert "Unable to verify the partition has been added to the transaction" in message
    cluster.wait_state("__transaction_state", lambda s: s["leader"] == -1, "the coordinator's partition offline")
    error, message = produce(0, b"unverifiable", 0)
    assert error is Errors.NOT_ENOUGH_REPLICAS, (error, message)
    assert ends("read_uncommitted") == [0, 4]  # inside, its marker, second-0, second-1
    coordinator.restart()
    cluster.wait_state("__transaction_state", lambda s: s["leader"] == coordinator.broker_id,
                       "the coordinator back")
    wait_until(lambda: end_txn() == 0, WAIT, "the second transaction never committed")
    wait_until(lambda: ends("read_committed") == [0, 5], WAIT, f"LSOs {ends('read_committed')}")
    assert committed_values() == [b"inside", b"second-0", b"second-1"]

    # real producers, their coordinator on one broker and their partitions' leader on another
    bootstrap = cluster.bootstrap()
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="kafka-python-1")
    try:
        producer.init_transactions()
        for n in range(2):
            producer.begin_transaction()
            for p in (0, 1):
                producer.send(topic, b"kp-%d-%d" % (n, p), partition=p)
            producer.commit_transaction()
    finally:
        producer.close(timeout=5)
    ck = CKProducer({"bootstrap.servers": ",".join(bootstrap), "transactional.id": "librdkafka-1",
                     "linger.ms": 0})
    ck.init_transactions(60)
    ck.begin_transaction()
    for p in (0, 1):
        ck.produce(topic, b"ck-%d" % p, partition=p)
    ck.commit_transaction(60)
    expected = sorted([b"inside", b"second-0", b"second-1", b"ck-0", b"ck-1"]
                      + [b"kp-%d-%d" % (n, p) for n in range(2) for p in (0, 1)])
    assert committed_values() == expected
    assert ends("read_committed") == ends("read_uncommitted")
