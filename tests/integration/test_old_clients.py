"""Old clients against a real broker: kafka-python pinned to the protocol of Kafka 0.9, 0.10.0
and 0.10.1 (Produce v0-v2 with message formats v0/v1, Fetch v0-v3 served by down-conversion),
each round-tripping keyed records, with every codec those formats allow, and reading what a
current producer wrote; a current consumer reads what they wrote."""
from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

OLD_VERSIONS = [(0, 9), (0, 10, 0), (0, 10, 1)]
CODECS = [None, "gzip", "snappy", "lz4"]
COUNT = 30


@pytest.fixture(scope="module")
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    yield client
    client.close()


def _topic(admin, name: str) -> str:
    admin.create_topics([NewTopic(name, 1, 1)])
    return name


def _produce(broker, topic: str, api_version=None, codec=None, prefix: str = "") -> None:
    kwargs = {} if api_version is None else {"api_version": api_version}
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, compression_type=codec, linger_ms=5, **kwargs)
    try:
        for i in range(COUNT):
            producer.send(topic, key=f"{prefix}k{i}".encode(), value=f"{prefix}v{i}".encode())
        producer.flush(timeout=30)
    finally:
        producer.close(timeout=10)


def _consume(broker, topic: str, api_version=None, expected: int = COUNT):
    kwargs = {} if api_version is None else {"api_version": api_version}
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, consumer_timeout_ms=8000, **kwargs)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got = []
        for message in consumer:
            got.append((message.offset, message.key, message.value))
            if len(got) >= expected:
                break
        return got
    finally:
        consumer.close()


def _expected(prefix: str = ""):
    return [(i, f"{prefix}k{i}".encode(), f"{prefix}v{i}".encode()) for i in range(COUNT)]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("api_version", OLD_VERSIONS, ids=lambda v: ".".join(map(str, v)))
def test_old_client_round_trip_and_current_consumer(broker, admin, api_version, codec) -> None:
    topic = _topic(admin, f"old-{'-'.join(map(str, api_version))}-{codec}")
    _produce(broker, topic, api_version, codec)
    assert _consume(broker, topic, api_version) == _expected()
    assert _consume(broker, topic) == _expected()


@pytest.mark.parametrize("api_version", OLD_VERSIONS, ids=lambda v: ".".join(map(str, v)))
def test_old_consumer_reads_a_current_producers_batches(broker, admin, api_version) -> None:
    topic = _topic(admin, f"new-to-old-{'-'.join(map(str, api_version))}")
    _produce(broker, topic, None, "gzip", prefix="n")
    assert _consume(broker, topic, api_version) == _expected("n")
