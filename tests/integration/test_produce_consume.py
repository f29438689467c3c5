"""kafka-python 3.x clients with their default settings (idempotent producer, acks=all)
against one real broker: every codec, keys and headers, records near max.message.bytes,
many partitions, assign/seek/poll, offsets by time, beginning/end offsets, long polls."""
from __future__ import annotations

import threading

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaError

# The same clients against a ZooKeeper-mode broker and a KRaft node: they cannot tell.
pytestmark = pytest.mark.metadata_modes("zookeeper", "kraft")

MAX_MESSAGE_BYTES = 1048588  # the broker default (message.max.bytes)


@pytest.fixture(scope="module")
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    yield client
    client.close()


@pytest.fixture(scope="module")
def producer(broker):
    p = KafkaProducer(bootstrap_servers=broker.bootstrap)
    yield p
    p.close()


def create_topic(admin, name: str, partitions: int = 1, configs: dict | None = None) -> None:
    admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs or {})])


def consumer_for(broker, **kwargs) -> KafkaConsumer:
    return KafkaConsumer(bootstrap_servers=broker.bootstrap, **kwargs)


def read_all(consumer: KafkaConsumer, tps: list[TopicPartition], expected: int, timeout_ms: int = 20000) -> list:
    """Poll until ``expected`` records arrived (or the poll gives nothing for ``timeout_ms``)."""
    records = []
    while len(records) < expected:
        batch = consumer.poll(timeout_ms=timeout_ms)
        if not batch:
            break
        for tp in tps:
            records.extend(batch.get(tp, []))
    return records


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"])
def test_every_codec_with_keys_and_headers_round_trips(broker, admin, codec):
    topic = f"codec-{codec or 'none'}"
    create_topic(admin, topic)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, compression_type=codec, linger_ms=20)
    try:
        futures = [producer.send(topic, key=f"key-{i}".encode(), value=(f"value-{i}-" * (i % 7 + 1)).encode(),
                                 headers=[("h1", f"{i}".encode()), ("empty", b"")])
                   for i in range(200)]
        producer.flush()
        offsets = [f.get(timeout=30).offset for f in futures]
    finally:
        producer.close()
    assert offsets == list(range(200))

    tp = TopicPartition(topic, 0)
    consumer = consumer_for(broker)
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        records = read_all(consumer, [tp], 200)
    finally:
        consumer.close()
    assert [r.offset for r in records] == list(range(200))
    for i, r in enumerate(records):
        assert r.key == f"key-{i}".encode()
        assert r.value == (f"value-{i}-" * (i % 7 + 1)).encode()
        assert r.headers == [("h1", f"{i}".encode()), ("empty", b"")]


def test_acks_one_and_zero(broker, admin):
    topic = "acks"
    create_topic(admin, topic)
    for acks in (1, 0):
        p = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=acks, enable_idempotence=False)
        try:
            for i in range(10):
                p.send(topic, value=f"{acks}-{i}".encode())
            p.flush()
        finally:
            p.close()
    tp = TopicPartition(topic, 0)
    consumer = consumer_for(broker)
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        values = [r.value for r in read_all(consumer, [tp], 20)]
    finally:
        consumer.close()
    assert values == [f"1-{i}".encode() for i in range(10)] + [f"0-{i}".encode() for i in range(10)]


def test_record_near_max_message_bytes_and_one_over_it(broker, admin):
    topic = "large"
    create_topic(admin, topic)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, max_request_size=4 * 1024 * 1024,
                             compression_type=None)
    big = bytes(range(256)) * ((MAX_MESSAGE_BYTES - 1000) // 256)
    try:
        assert producer.send(topic, key=b"big", value=big).get(timeout=30).offset == 0
    finally:
        producer.close()
    # An idempotent producer treats a rejected batch as fatal, so the oversized record gets
    # a producer of its own.
    oversize = KafkaProducer(bootstrap_servers=broker.bootstrap, max_request_size=4 * 1024 * 1024)
    try:
        with pytest.raises(KafkaError) as raised:
            oversize.send(topic, value=b"x" * (MAX_MESSAGE_BYTES + 10)).get(timeout=30)
        assert type(raised.value).errno == 10  # MESSAGE_TOO_LARGE (RecordTooLargeException)
    finally:
        oversize.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    try:
        assert producer.send(topic, value=b"after").get(timeout=30).offset == 1
    finally:
        producer.close()

    tp = TopicPartition(topic, 0)
    consumer = consumer_for(broker)
    try:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        records = read_all(consumer, [tp], 2)
    finally:
        consumer.close()
    assert [r.value for r in records] == [big, b"after"]


def test_many_partitions(broker, admin, producer):
    topic = "many"
    partitions = 24
    create_topic(admin, topic, partitions)
    futures = [producer.send(topic, value=f"{p}-{i}".encode(), partition=p)
               for i in range(5) for p in range(partitions)]
    producer.flush()
    assert all(f.get(timeout=30) for f in futures)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer = consumer_for(broker)
    try:
        assert consumer.partitions_for_topic(topic) == set(range(partitions))
        assert consumer.end_offsets(tps) == {tp: 5 for tp in tps}
        assert consumer.beginning_offsets(tps) == {tp: 0 for tp in tps}
        consumer.assign(tps)
        consumer.seek_to_beginning()
        records = read_all(consumer, tps, 5 * partitions)
    finally:
        consumer.close()
    by_partition: dict[int, list[bytes]] = {}
    for r in records:
        by_partition.setdefault(r.partition, []).append(r.value)
    assert by_partition == {p: [f"{p}-{i}".encode() for i in range(5)] for p in range(partitions)}


def test_seek_and_offsets_for_times(broker, admin, producer):
    topic = "times"
    # fixed timestamps long past: time-based retention must not delete them mid-test
    create_topic(admin, topic, configs={"retention.ms": "-1"})
    base = 1_700_000_000_000
    for i in range(10):
        producer.send(topic, value=f"t{i}".encode(), timestamp_ms=base + i * 1000)
    producer.flush()
    tp = TopicPartition(topic, 0)
    consumer = consumer_for(broker)
    try:
        found = consumer.offsets_for_times({tp: base + 4500})
        assert found[tp].offset == 5 and found[tp].timestamp == base + 5000
        assert consumer.offsets_for_times({tp: base})[tp].offset == 0
        assert consumer.offsets_for_times({tp: base + 60_000})[tp] is None
        assert consumer.beginning_offsets([tp]) == {tp: 0}
        assert consumer.end_offsets([tp]) == {tp: 10}
        consumer.assign([tp])
        consumer.seek(tp, 7)
        assert [r.value for r in read_all(consumer, [tp], 3)] == [b"t7", b"t8", b"t9"]
        assert consumer.position(tp) == 10
    finally:
        consumer.close()


def test_long_poll_returns_when_data_arrives(broker, admin, producer):
    topic = "longpoll"
    create_topic(admin, topic)
    tp = TopicPartition(topic, 0)
    # The broker holds each fetch up to 30 s; a poll that gives up after 20 s only sees the
    # record if the arriving data completed the waiting fetch.
    consumer = consumer_for(broker, fetch_max_wait_ms=30000, fetch_min_bytes=1, request_timeout_ms=60000)
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        assert consumer.poll(timeout_ms=500) == {}  # a fetch is now waiting in the broker
        sent = threading.Event()

        def produce() -> None:
            producer.send(topic, value=b"wake-up").get(timeout=30)
            sent.set()

        thread = threading.Thread(target=produce)
        thread.start()
        records = read_all(consumer, [tp], 1, timeout_ms=20000)
        thread.join()
    finally:
        consumer.close()
    assert sent.is_set()
    assert [r.value for r in records] == [b"wake-up"]


def test_consumer_auto_creates_nothing_and_producer_auto_creates_topic(broker, producer):
    # auto.create.topics.enable (default true): the producer's metadata request creates it
    assert producer.send("auto-created", value=b"v").get(timeout=30).offset == 0
    consumer = consumer_for(broker)
    try:
        assert consumer.partitions_for_topic("auto-created") == {0}
    finally:
        consumer.close()


def test_read_committed_consumer_sees_non_transactional_records(broker, admin, producer):
    topic = "committed"
    create_topic(admin, topic)
    for i in range(5):
        producer.send(topic, value=f"c{i}".encode())
    producer.flush()
    tp = TopicPartition(topic, 0)
    consumer = consumer_for(broker, isolation_level="read_committed")
    try:
        # the last stable offset of a partition without transactions is its high watermark
        assert consumer.end_offsets([tp]) == {tp: 5}
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        assert [r.value for r in read_all(consumer, [tp], 5)] == [f"c{i}".encode() for i in range(5)]
    finally:
        consumer.close()
