"""Transactions against one real broker: kafka-python 3.x and confluent-kafka (librdkafka)
transactional producers, read_committed and read_uncommitted consumers, a consume-transform-
produce loop killed with SIGKILL mid-transaction, zombie fencing, a hung producer aborted by
its timeout, and bad input answered with Kafka's error codes."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest
from confluent_kafka import Consumer as CKConsumer
from confluent_kafka import KafkaException as CKKafkaException
from confluent_kafka import Producer as CKProducer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaError

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from tests.integration.broker_harness import ROOT, RawClient, wait_until
from tests.integration.conftest import new_broker

# The same transactions against a ZooKeeper-mode broker and a KRaft node.
pytestmark = pytest.mark.metadata_modes("zookeeper", "kraft")

WAIT = 60.0
# Short enough that a hung producer's transaction is aborted within the test.
ABORT_INTERVAL_MS = 500


@pytest.fixture(scope="module")
def broker(request, metadata_mode, tmp_path_factory):
    b = new_broker(request, metadata_mode, tmp_path_factory.mktemp("broker"),
                   overrides={"transaction.abort.timed.out.transaction.cleanup.interval.ms":
                              str(ABORT_INTERVAL_MS)})
    b.start()
    yield b
    if b.running:
        assert b.stop() == 0, b.tail()


def create_topic(broker, name: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


def read_topic(broker, topic: str, partitions: int, isolation: str) -> list[bytes]:
    """Every value up to the end offsets the consumer's isolation level sees (the LSO for
    read_committed), partition after partition."""
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, isolation_level=isolation,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        ends = consumer.end_offsets(tps)
        values: list[bytes] = []
        deadline = time.monotonic() + WAIT
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            assert time.monotonic() < deadline, f"did not reach {ends}"
            for records in consumer.poll(200).values():
                values.extend(r.value for r in records)
        return sorted(values)
    finally:
        consumer.close()


def end_offsets(broker, topic: str, partitions: int, isolation: str) -> list[int]:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, isolation_level=isolation)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        ends = consumer.end_offsets(tps)
        return [ends[tp] for tp in tps]
    finally:
        consumer.close()


# ---------------------------------------------------------------------------- commit and abort


def test_kafka_python_commit_and_abort_across_partitions(broker):
    topic = "txn-kp"
    create_topic(broker, topic, 3)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="kp-1")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        for i in range(9):
            producer.send(topic, b"committed-%d" % i, partition=i % 3)
        producer.commit_transaction()
        producer.begin_transaction()
        for i in range(6):
            producer.send(topic, b"aborted-%d" % i, partition=i % 3)
        producer.flush()  # on the broker before the abort, or the client just drops them
        producer.abort_transaction()
    finally:
        producer.close()
    committed = sorted(b"committed-%d" % i for i in range(9))
    aborted = sorted(b"aborted-%d" % i for i in range(6))
    assert read_topic(broker, topic, 3, "read_committed") == committed
    assert read_topic(broker, topic, 3, "read_uncommitted") == sorted(committed + aborted)
    # every transaction is decided: the LSO is the high watermark (3 data + 2 markers each)
    assert end_offsets(broker, topic, 3, "read_committed") == end_offsets(broker, topic, 3, "read_uncommitted") \
        == [7, 7, 7]


def test_open_transaction_holds_read_committed_at_the_lso(broker):
    topic = "txn-lso"
    create_topic(broker, topic, 1)
    plain = KafkaProducer(bootstrap_servers=broker.bootstrap)
    plain.send(topic, b"before", partition=0).get(30)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="lso-1")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"open", partition=0)
        producer.flush()
        plain.send(topic, b"after", partition=0).get(30)
        # read_committed stops before the open transaction; read_uncommitted reads on
        assert end_offsets(broker, topic, 1, "read_committed") == [1]
        assert end_offsets(broker, topic, 1, "read_uncommitted") == [3]
        assert read_topic(broker, topic, 1, "read_committed") == [b"before"]
        producer.commit_transaction()
    finally:
        producer.close()
        plain.close()
    assert read_topic(broker, topic, 1, "read_committed") == [b"after", b"before", b"open"]


def test_confluent_kafka_transactions_and_read_committed_consumer(broker):
    topic = "txn-ck"
    create_topic(broker, topic, 2)
    producer = CKProducer({"bootstrap.servers": broker.bootstrap, "transactional.id": "ck-1"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(10):
        producer.produce(topic, b"ck-committed-%d" % i, partition=i % 2)
    producer.commit_transaction(30)
    producer.begin_transaction()
    for i in range(4):
        producer.produce(topic, b"ck-aborted-%d" % i, partition=i % 2)
    producer.flush(30)
    producer.abort_transaction(30)
    consumer = CKConsumer({"bootstrap.servers": broker.bootstrap, "group.id": f"ck-{uuid.uuid4()}",
                           "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                           "enable.partition.eof": True})
    try:
        consumer.subscribe([topic])
        values, eofs = [], set()
        deadline = time.monotonic() + WAIT
        while len(eofs) < 2:
            assert time.monotonic() < deadline, values
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                eofs.add(message.partition())
                continue
            values.append(message.value())
    finally:
        consumer.close()
    assert sorted(values) == sorted(b"ck-committed-%d" % i for i in range(10))
    assert len(read_topic(broker, topic, 2, "read_uncommitted")) == 14


# ---------------------------------------------------------------------------- fencing and timeouts


def test_a_new_instance_fences_the_zombie(broker):
    topic = "txn-zombie"
    create_topic(broker, topic, 1)
    zombie = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="zombie-1")
    zombie.init_transactions()
    zombie.begin_transaction()
    zombie.send(topic, b"zombie", partition=0)
    zombie.flush()
    successor = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="zombie-1")
    try:
        # the successor's initialisation aborts the zombie's transaction and bumps the epoch
        successor.init_transactions()
        successor.begin_transaction()
        successor.send(topic, b"successor", partition=0)
        successor.commit_transaction()
        with pytest.raises(KafkaError):
            zombie.send(topic, b"zombie-again", partition=0)
            zombie.commit_transaction()
    finally:
        successor.close()
        zombie.close(timeout=5)
    assert read_topic(broker, topic, 1, "read_committed") == [b"successor"]


def test_a_hung_producer_is_aborted_after_its_timeout_and_the_lso_moves_on(broker):
    topic = "txn-hung"
    create_topic(broker, topic, 1)
    hung = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="hung-1",
                         transaction_timeout_ms=2000)
    try:
        hung.init_transactions()
        hung.begin_transaction()
        hung.send(topic, b"never-committed", partition=0)
        hung.flush()
        assert end_offsets(broker, topic, 1, "read_committed") == [0]
        # the coordinator aborts it (transaction.timeout.ms 2 s, checked every 0.5 s): the marker
        # moves the LSO past the data
        wait_until(lambda: end_offsets(broker, topic, 1, "read_committed") == [2], WAIT,
                   "the timed-out transaction was not aborted")
        assert read_topic(broker, topic, 1, "read_committed") == []
        assert read_topic(broker, topic, 1, "read_uncommitted") == [b"never-committed"]
        # and its producer was fenced by the epoch bump
        with pytest.raises(KafkaError):
            hung.commit_transaction()
    finally:
        hung.close(timeout=5)


# ---------------------------------------------------------------------------- exactly once


def _start_transformer(broker, input_topic, output_topic, group, txn_id, pause_ms):
    env = dict(os.environ, TXN_PAUSE_BEFORE_COMMIT_MS=str(pause_ms), TXN_IDLE_EXIT_S="4", PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "tests.integration.txn_transformer", broker.bootstrap,
                             input_topic, output_topic, group, txn_id], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait_line(process, prefix: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(prefix):
            return line
    raise AssertionError(f"no {prefix!r} line; output:\n{''.join(seen[-30:])}")


def test_consume_transform_produce_is_exactly_once_across_a_kill(broker):
    input_topic, output_topic, group, txn_id = "eos-in", "eos-out", "eos-group", "eos-transformer"
    create_topic(broker, input_topic, 2)
    create_topic(broker, output_topic, 2)
    inputs = 200
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    for i in range(inputs):
        producer.send(input_topic, b"v%d" % i, partition=i % 2)
    producer.flush()
    producer.close()

    first = _start_transformer(broker, input_topic, output_topic, group, txn_id, pause_ms=1000)
    try:
        _wait_line(first, "committed", WAIT)
        # mid-transaction: its records are on the broker, the commit 1 s away
        _wait_line(first, "written", WAIT)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    second = _start_transformer(broker, input_topic, output_topic, group, txn_id, pause_ms=0)
    try:
        _wait_line(second, "done", 3 * WAIT)
        assert second.wait(30) == 0
    finally:
        if second.poll() is None:
            second.kill()

    out = read_topic(broker, output_topic, 2, "read_committed")
    # each input record's result exactly once
    sources = sorted(v.split(b":", 3)[3] for v in out)
    assert sources == sorted(b"v%d" % i for i in range(inputs))
    assert len(set(out)) == len(out) == inputs
    # the killed instance left results of its open transaction, which were aborted
    assert len(read_topic(broker, output_topic, 2, "read_uncommitted")) > inputs


# ---------------------------------------------------------------------------- bad input


def req(api: ApiKeys, version: int, **fields):
    return build_entity(request_schema(api, version), fields)


def test_bad_transactional_requests_get_kafkas_errors_and_append_nothing(broker):
    topic = "txn-bad"
    create_topic(broker, topic, 1)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="bad-1")
    producer.init_transactions()  # the coordinator now knows bad-1 and is loaded
    producer.close()
    with RawClient(broker.port) as client:
        coordinator = client.request(ApiKeys.FIND_COORDINATOR, 3, req(ApiKeys.FIND_COORDINATOR, 3, key="bad-1",
                                                                      key_type=1))
        assert coordinator.error_code == 0 and coordinator.port == broker.port
        init = client.request(ApiKeys.INIT_PRODUCER_ID, 4, req(ApiKeys.INIT_PRODUCER_ID, 4, transactional_id="bad-1",
                                                                transaction_timeout=60000))
        assert init.error_code == 0
        pid, epoch = init.producer_id, init.producer_epoch

        def add_partitions(txn_id, producer_id, producer_epoch):
            return client.request(ApiKeys.ADD_PARTITIONS_TO_TXN, 3, req(
                ApiKeys.ADD_PARTITIONS_TO_TXN, 3, v3_and_below_transactional_id=txn_id,
                v3_and_below_producer_id=producer_id, v3_and_below_producer_epoch=producer_epoch,
                v3_and_below_topics=[{"name": topic, "partitions": [0]}]))

        def error_of(response):
            return response.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code

        def end_txn(txn_id, producer_id, producer_epoch):
            return client.request(ApiKeys.END_TXN, 3, req(ApiKeys.END_TXN, 3, transactional_id=txn_id,
                                                          producer_id=producer_id, producer_epoch=producer_epoch,
                                                          committed=True)).error_code

        assert error_of(add_partitions("no-such-id", pid, epoch)) == Errors.INVALID_PRODUCER_ID_MAPPING.error_code
        assert error_of(add_partitions("bad-1", pid, epoch + 1)) == Errors.PRODUCER_FENCED.error_code
        assert end_txn("no-such-id", pid, epoch) == Errors.INVALID_PRODUCER_ID_MAPPING.error_code
        assert end_txn("bad-1", pid, epoch + 1) == Errors.PRODUCER_FENCED.error_code
        # nothing added: there is no transaction to end
        assert end_txn("bad-1", pid, epoch) == Errors.INVALID_TXN_STATE.error_code
        response = client.request(ApiKeys.ADD_PARTITIONS_TO_TXN, 3, req(
            ApiKeys.ADD_PARTITIONS_TO_TXN, 3, v3_and_below_transactional_id="bad-1", v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch, v3_and_below_topics=[{"name": "no-such-topic", "partitions": [0]}]))
        assert error_of(response) == Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code
        # offsets for a member the group coordinator does not know
        commit = client.request(ApiKeys.TXN_OFFSET_COMMIT, 3, req(
            ApiKeys.TXN_OFFSET_COMMIT, 3, transactional_id="bad-1", group_id="no-such-group", producer_id=pid,
            producer_epoch=epoch, generation_id=1, member_id="no-such-member", group_instance_id=None,
            topics=[{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                     "committed_leader_epoch": -1, "committed_metadata": ""}]}]))
        assert commit.topics[0].partitions[0].error_code == Errors.UNKNOWN_MEMBER_ID.error_code
        # a transactional write to a partition never added to a transaction is refused
        batch = build_batch([SimpleRecord(None, b"sneaky", 1_700_000_000_000)], producer_id=pid,
                            producer_epoch=epoch, base_sequence=0, is_transactional=True)
        produce = client.request(ApiKeys.PRODUCE, 8, req(
            ApiKeys.PRODUCE, 8, transactional_id="bad-1", acks=-1, timeout=30000,
            topic_data=[{"name": topic, "partition_data": [{"index": 0, "records": batch}]}]))
        assert produce.responses[0].partition_responses[0].error_code == Errors.INVALID_TXN_STATE.error_code
        # WriteTxnMarkers, both of 2.8's versions, for a partition this broker does not have
        for version in (0, 1):
            markers = client.request(ApiKeys.WRITE_TXN_MARKERS, version, req(
                ApiKeys.WRITE_TXN_MARKERS, version, markers=[{
                    "producer_id": pid, "producer_epoch": epoch, "transaction_result": True,
                    "coordinator_epoch": 0, "topics": [{"name": "no-such-topic", "partition_indexes": [0]}]}]))
            result = markers.markers[0]
            assert result.producer_id == pid
            assert result.topics[0].partitions[0].error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code
    assert end_offsets(broker, topic, 1, "read_uncommitted") == [0]
