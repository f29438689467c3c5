"""Topics of message format v0 and v1 on a real broker (message.format.version 0.9.0 and
0.10.2): what a current producer writes is stored in the topic's format (the magic byte of
every entry in the segment file says so), and current and old consumers read it back in order,
with keys, values and (v1) timestamps: kafka-python at its newest Fetch, kafka-python pinned
to Kafka 0.9/0.10.0 (Fetch v1/v2), and librdkafka (confluent-kafka). Old producers' message
sets are stored in the topic's format too. Compaction of a v1 topic keeps the latest value of
each key. Bad input gets Kafka's error code and leaves the log end offset where it was, and a
broker whose log.message.format.version is newer than its inter.broker.protocol.version does
not start. The old producers' sets, log append time and the bad input run on a KRaft node too,
where a topic's message.format.version arrives as a ConfigRecord."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
import zlib

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_py.clients.common.topic_partition import TopicPartition as KpTopicPartition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.clients.common.record.compression import CompressionType, compress
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.legacy_record import write_entry
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile
from kafka_py.clients.common.record.memory_records import MemoryRecords
from tests.integration.broker_harness import ROOT, RawClient, unique_chroot, wait_until
from tests.integration.test_replication import WAIT, Cluster, consume_all, topic_name, wait_replicas_identical
from tests.integration.test_replication import produce as replicated_produce

confluent_kafka = pytest.importorskip("confluent_kafka")

COUNT = 40
BASE_TS = int(time.time() * 1000) - 60_000
FORMATS = {0: "0.9.0", 1: "0.10.2"}
# the kafka-python protocol pins reading each format without conversion (Fetch v1 and v2)
OLD_CLIENTS = {0: (0, 9), 1: (0, 10, 0)}


def create_topic(broker, name: str, **configs: str) -> str:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(name, 1, 1, topic_configs=dict(configs))])
    finally:
        admin.close()
    return name


def expected(prefix: str = "", count: int = COUNT):
    return [(i, f"{prefix}k{i}".encode(), f"{prefix}v{i}".encode(), BASE_TS + i) for i in range(count)]


def produce(broker, topic: str, codec=None, prefix: str = "", api_version=None, count: int = COUNT) -> None:
    # A current producer is idempotent by default (kafka-python 3, Java clients from 3.0), and
    # idempotent batches cannot be written in format v0/v1: it must be turned off for these topics.
    kwargs = {"enable_idempotence": False} if api_version is None else {"api_version": api_version}
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, compression_type=codec, linger_ms=5, **kwargs)
    try:
        for offset, key, value, ts in expected(prefix, count):
            producer.send(topic, key=key, value=value, timestamp_ms=ts)
        producer.flush(timeout=30)
    finally:
        producer.close(timeout=10)


def consume_kafka_python(broker, topic: str, api_version=None, count: int = COUNT):
    kwargs = {} if api_version is None else {"api_version": api_version}
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, consumer_timeout_ms=10_000, **kwargs)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got = []
        for message in consumer:
            got.append((message.offset, message.key, message.value, message.timestamp))
            if len(got) >= count:
                break
        return got
    finally:
        consumer.close()


def consume_librdkafka(broker, topic: str, count: int = COUNT):
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"{topic}-reader",
                                         "enable.auto.commit": False})
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        got, errors = [], []
        deadline = time.monotonic() + 60
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                errors.append(str(msg.error()))
                continue
            got.append((msg.offset(), msg.key(), msg.value(), msg.timestamp()[1]))
        assert not errors, errors
        return got
    finally:
        consumer.close()


def entry_magics(broker, topic: str) -> list[int]:
    """The magic byte of every entry of the partition's segment files, walking the files."""
    return _entry_magics_of_dir(os.path.join(str(broker.log_dir), f"{topic}-0"))


def _entry_magics_of_dir(directory) -> list[int]:
    magics = []
    for name in sorted(n for n in os.listdir(directory) if n.endswith(".log")):
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        pos = 0
        while pos + 17 <= len(data):
            size = struct.unpack_from(">i", data, pos + 8)[0]
            if size <= 0:
                break  # preallocated zeros
            magics.append(data[pos + 16])
            pos += 12 + size
    return magics


def log_end_offset(broker, topic: str) -> int:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
    try:
        tp = TopicPartition(topic, 0)
        return consumer.end_offsets([tp])[tp]
    finally:
        consumer.close()


# ---------------------------------------------------------------------------- stored and read back

@pytest.mark.parametrize("codec", [None, "gzip", "lz4"])
@pytest.mark.parametrize("magic", [0, 1])
def test_a_current_producers_records_are_stored_in_the_topics_format_and_read_by_every_client(
        broker, magic, codec):
    """(An idempotent producer, the default of current clients, is refused: see the bad input.)"""
    topic = create_topic(broker, f"format-v{magic}-{codec}", **{"message.format.version": FORMATS[magic]})
    produce(broker, topic, codec)
    magics = entry_magics(broker, topic)
    assert magics and set(magics) == {magic}
    # uncompressed, one entry per message; gzip, wrappers of several (kafka-python sends a batch
    # uncompressed when its codec would not shrink it, as lz4 may not for these records)
    if codec is None:
        assert len(magics) == COUNT
    elif codec == "gzip":
        assert len(magics) < COUNT

    want = expected()
    if magic == 0:
        want = [(o, k, v, None) for o, k, v, _ in want]  # format v0 has no timestamps
    assert consume_kafka_python(broker, topic) == want
    assert consume_kafka_python(broker, topic, OLD_CLIENTS[magic]) == want
    assert [(o, k, v) for o, k, v, _ in consume_librdkafka(broker, topic)] == [(o, k, v) for o, k, v, _ in want]
    if magic == 1:
        assert [ts for *_, ts in consume_librdkafka(broker, topic)] == [ts for *_, ts in want]
        # a Kafka 0.9 consumer (Fetch v1) reads format v0: the broker converts the entries down
        assert consume_kafka_python(broker, topic, (0, 9)) == [(o, k, v, None) for o, k, v, _ in want]


@pytest.mark.metadata_modes("zookeeper", "kraft")
@pytest.mark.parametrize("magic", [0, 1])
def test_old_producers_sets_are_stored_in_the_topics_format(broker, magic):
    topic = create_topic(broker, f"old-producers-v{magic}", **{"message.format.version": FORMATS[magic]})
    produce(broker, topic, "snappy", prefix="a", api_version=(0, 9), count=10)
    produce(broker, topic, None, prefix="b", api_version=(0, 10, 0), count=10)
    assert set(entry_magics(broker, topic)) == {magic}
    got = consume_kafka_python(broker, topic, count=20)
    assert [(o, k, v) for o, k, v, _ in got] == (
        [(o, k, v) for o, k, v, _ in expected("a", 10)] + [(10 + o, k, v) for o, k, v, _ in expected("b", 10)])


@pytest.mark.metadata_modes("zookeeper", "kraft")
def test_a_v1_topic_under_log_append_time_stamps_the_brokers_time(broker):
    topic = create_topic(broker, "format-v1-append-time", **{"message.format.version": "0.10.2",
                                                              "message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    produce(broker, topic, "gzip", count=10)
    got = consume_kafka_python(broker, topic, count=10)
    assert all(ts >= before for *_, ts in got) and [o for o, *_ in got] == list(range(10))


# ---------------------------------------------------------------------------- compaction

def test_compaction_of_a_v1_topic_keeps_the_latest_value_of_each_key(broker_factory):
    broker = broker_factory(overrides={"log.cleaner.backoff.ms": "100", "log.cleaner.threads": "1",
                                       "log.cleaner.dedupe.buffer.size": str(4 * 1024 * 1024)})
    broker.start()
    topic = create_topic(broker, "compacted-v1", **{"message.format.version": "0.10.2", "cleanup.policy": "compact",
                                                    "segment.bytes": "4096", "segment.ms": "200",
                                                    "min.cleanable.dirty.ratio": "0.01"})
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5, batch_size=1024,
                             compression_type="gzip", enable_idempotence=False)
    latest = {}
    try:
        for round_ in range(30):
            for k in range(10):
                key, value = b"key-%d" % k, b"round-%03d-" % round_ + b"x" * 60
                producer.send(topic, key=key, value=value)
                latest[key] = value
        producer.flush(timeout=30)
    finally:
        producer.close(timeout=10)
    directory = os.path.join(str(broker.log_dir), f"{topic}-0")
    checkpoint = os.path.join(str(broker.log_dir), "cleaner-offset-checkpoint")

    def cleaned_up_to_active_segment() -> bool:
        active = max(int(n.split(".")[0]) for n in os.listdir(directory) if n.endswith(".log"))
        cleaned = OffsetCheckpointFile(checkpoint).read().get(KpTopicPartition(topic, 0), -1) \
            if os.path.exists(checkpoint) else -1
        return active > 0 and cleaned >= active

    wait_until(cleaned_up_to_active_segment, 60, lambda: f"the cleaner never caught up:\n{broker.tail()}")
    assert set(entry_magics(broker, topic)) == {1}
    end = log_end_offset(broker, topic)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
    seen, count = {}, 0
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        deadline = time.monotonic() + 60
        while consumer.position(tp) < end and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=2000).values():
                for record in records:
                    seen[record.key] = record.value
                    count += 1
    finally:
        consumer.close()
    assert seen == latest
    assert count < 300 // 2, "the overwritten values are gone"


# ---------------------------------------------------------------------------- bad input

def req(api: ApiKeys, version: int, **values):
    cls = request_schema(api, version)
    return build_entity(cls, values)


def produce_raw(client: RawClient, topic: str, records: bytes, version: int = 2, **extra) -> int:
    request = req(ApiKeys.PRODUCE, version, acks=-1, timeout=30000, **extra,
                  topic_data=[{"name": topic, "partition_data": [{"index": 0, "records": records}]}])
    [topic_response] = client.request(ApiKeys.PRODUCE, version, request).responses
    [partition] = topic_response.partition_responses
    return int(partition.error_code)


def v1_messages(n: int) -> bytearray:
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    for i in range(n):
        builder.append(i, timestamp=BASE_TS + i, key=b"k%d" % i, value=b"v%d" % i)
    return bytearray(builder.build())


@pytest.mark.metadata_modes("zookeeper", "kraft")
def test_bad_input_gets_kafkas_error_and_appends_nothing(broker):
    topic = create_topic(broker, "format-v1-guarded", **{"message.format.version": "0.10.2"})
    produce(broker, topic, count=5)
    with RawClient(broker.port) as client:
        # the good case first: an old producer's set goes in
        assert produce_raw(client, topic, bytes(v1_messages(2))) == Errors.NONE.error_code
        assert log_end_offset(broker, topic) == 7

        bad_crc = v1_messages(2)
        bad_crc[-1] ^= 0xFF
        assert produce_raw(client, topic, bytes(bad_crc)) == Errors.CORRUPT_MESSAGE.error_code

        inner = bytearray()
        for i in range(3):
            write_entry(inner, i, 1, BASE_TS, b"k", b"v")
        wrapper = bytearray()
        write_entry(wrapper, 1, 1, BASE_TS, None, compress(CompressionType.GZIP, bytes(inner)), CompressionType.GZIP)
        # a wrapper claiming to end before its last inner message
        assert produce_raw(client, topic, bytes(wrapper)) == Errors.INVALID_RECORD.error_code

        claims_append_time = v1_messages(1)
        claims_append_time[12 + 5] |= 0x08
        struct.pack_into(">I", claims_append_time, 12, zlib.crc32(bytes(claims_append_time[16:])))
        assert produce_raw(client, topic, bytes(claims_append_time)) == Errors.INVALID_TIMESTAMP.error_code

        idempotent = build_batch([SimpleRecord(b"k", b"v", BASE_TS)], producer_id=1, producer_epoch=0,
                                 base_sequence=0)
        assert produce_raw(client, topic, idempotent, 8, transactional_id=None) == \
            Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT.error_code
    assert log_end_offset(broker, topic) == 7
    assert set(entry_magics(broker, topic)) == {1}
    got = consume_kafka_python(broker, topic, count=7)
    assert [k for _, k, _, _ in got] == [b"k0", b"k1", b"k2", b"k3", b"k4", b"k0", b"k1"]


def test_a_transactional_producer_is_refused_by_a_v1_topic_and_its_abort_completes(broker):
    topic = create_topic(broker, "format-v1-transactional", **{"message.format.version": "0.10.2"})
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="format-v1-txn")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        with pytest.raises(Exception) as info:
            producer.send(topic, key=b"k", value=b"v").get(timeout=30)
        assert "UnsupportedForMessageFormat" in type(info.value).__name__ + str(info.value)
        # the coordinator's abort marker has no place in the topic either: the partition is
        # dropped from the transaction (TransactionMarkerRequestCompletionHandler) and it ends
        producer.abort_transaction()
    finally:
        producer.close(timeout=10)
    assert log_end_offset(broker, topic) == 0
    assert entry_magics(broker, topic) == []


def test_a_v0_message_with_the_timestamp_type_bit_is_taken_as_kafka_takes_it(broker):
    """Format v0 has no timestamp type; Kafka 2.8.2 ignores a v0 message's attribute bit 3
    (LegacyRecord.timestampType) and appends the message, and so does this broker."""
    topic = create_topic(broker, "format-v0-attribute", **{"message.format.version": "0.9.0"})
    data = bytearray()
    write_entry(data, 0, 0, -1, b"key", b"value")
    data[12 + 5] |= 0x08
    struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    with RawClient(broker.port) as client:
        assert produce_raw(client, topic, bytes(data), version=0) == Errors.NONE.error_code
    assert consume_kafka_python(broker, topic, count=1) == [(0, b"key", b"value", None)]


# ---------------------------------------------------------------------------- configuration

def test_a_log_message_format_newer_than_the_inter_broker_protocol_stops_startup(tmp_path):
    config = tmp_path / "server.properties"
    config.write_text(f"zookeeper.connect=127.0.0.1:1\nlog.dirs={tmp_path / 'logs'}\n"
                      "inter.broker.protocol.version=0.10.2\nlog.message.format.version=2.8\n")
    result = subprocess.run([sys.executable, "-m", "kafka_py.core.kafka", str(config)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "log.message.format.version" in result.stderr
    assert "inter.broker.protocol.version is set to version 0.11.0 or higher" in result.stderr


# ---------------------------------------------------------------------------- replication

@pytest.fixture
def cluster(broker_factory):
    """Brokers 0, 1 and 2 in one ZooKeeper chroot."""
    chroot = unique_chroot("message-formats")
    props = {"auto.leader.rebalance.enable": "false", "default.replication.factor": "3",
             "offsets.topic.replication.factor": "3", "replica.fetch.backoff.ms": "200"}
    made = Cluster([broker_factory(i, chroot=chroot, overrides=props) for i in range(3)])
    yield made.start()
    made.close()


def test_followers_of_a_v1_topic_store_the_leaders_bytes_and_catch_up_by_the_high_watermark(cluster):
    """Entries of format v1 carry no leader epoch, so a v1 log keeps no epoch cache: a follower
    that was away truncates to its high watermark and fetches the rest (Kafka's fallback)."""
    topic = topic_name("format-v1-rf3")
    cluster.create_topic(topic, {0: [0, 1, 2]}, message_format_version="0.10.2")
    values = [b"value-%d-" % i + b"x" * (i % 7) for i in range(300)]
    replicated_produce(cluster.bootstrap(), topic, values[:150], "all", enable_idempotence=False)
    replicated_produce(cluster.bootstrap(), topic, values[150:], "all", enable_idempotence=False,
                       compression_type="gzip")
    batches = wait_replicas_identical(cluster, topic)
    assert {raw[16] for raw in batches} == {1}
    assert [r.value for raw in batches for r in MemoryRecords(raw).records()] == values
    for b in cluster.brokers:
        assert not (b.log_dir / f"{topic}-0" / "leader-epoch-checkpoint").exists()

    leader = cluster.state(topic)["leader"]
    follower = cluster.brokers[next(i for i in (2, 1, 0) if i != leader)]
    follower.kill()
    more = [b"while-away-%d" % i for i in range(100)]
    replicated_produce(cluster.bootstrap([b.broker_id for b in cluster.brokers if b.running]), topic, more, 1,
                       enable_idempotence=False)
    follower.restart(WAIT)
    batches = wait_replicas_identical(cluster, topic)
    assert [r.value for raw in batches for r in MemoryRecords(raw).records()] == values + more
    assert consume_all(cluster.bootstrap([follower.broker_id]), topic, len(values) + len(more)) == values + more


# ---------------------------------------------------------------------------- the broker's default

def test_log_message_format_version_of_the_broker_applies_to_every_topic_and_the_offsets_topic(broker_factory):
    broker = broker_factory(overrides={"log.message.format.version": "0.10.2"})
    broker.start()
    topic = create_topic(broker, "broker-default-v1")
    produce(broker, topic, "gzip", count=10)
    assert set(entry_magics(broker, topic)) == {1}
    # a consumer group's offsets go to __consumer_offsets, of the broker's format too, and are
    # read back from there by the group coordinator after a restart
    consumer = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id="format-v1-group",
                             auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=10_000)
    try:
        got = [m.offset for _, m in zip(range(10), consumer)]
        consumer.commit()
    finally:
        consumer.close()
    assert got == list(range(10))
    offsets_partitions = [d for d in os.listdir(broker.log_dir) if d.startswith("__consumer_offsets-")]
    stored = [m for d in offsets_partitions for m in _entry_magics_of_dir(broker.log_dir / d)]
    assert stored and set(stored) == {1}
    assert broker.stop() == 0, broker.tail()
    broker.restart(WAIT)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="format-v1-group",
                             enable_auto_commit=False)
    try:
        tp = TopicPartition(topic, 0)
        # the coordinator answers once it has loaded the offsets partition
        committed = None
        deadline = time.monotonic() + WAIT
        for _ in range(60):
            committed = consumer.committed(tp)
            if committed is not None or time.monotonic() > deadline:
                break
        assert committed == 10
    finally:
        consumer.close()
