"""Log compaction on a real broker: kafka-python clients, a compacted topic, the cleaner threads."""
from __future__ import annotations

import os

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import InvalidRecordError

from kafka_py.clients.common.topic_partition import TopicPartition as KpTopicPartition
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile
from tests.integration.broker_harness import wait_until

TOPIC = "compacted-overwrites"
KEYS = 25
ROUNDS = 40


@pytest.fixture
def compacting_broker(broker_factory):
    broker = broker_factory(overrides={
        "log.cleaner.backoff.ms": "100",
        "log.cleaner.threads": "1",
        "log.cleaner.dedupe.buffer.size": str(4 * 1024 * 1024),
        "log.retention.check.interval.ms": "1000",
    })
    broker.start()
    return broker


def partition_dir(broker) -> str:
    return os.path.join(str(broker.log_dir), f"{TOPIC}-0")


def segment_files(broker) -> list[str]:
    return sorted(n for n in os.listdir(partition_dir(broker)) if n.endswith(".log"))


def log_bytes(broker) -> int:
    return sum(os.path.getsize(os.path.join(partition_dir(broker), n)) for n in segment_files(broker))


def cleaner_checkpoint(broker) -> int:
    path = os.path.join(str(broker.log_dir), "cleaner-offset-checkpoint")
    return OffsetCheckpointFile(path).read().get(KpTopicPartition(TOPIC, 0), -1)


def test_compacted_topic_keeps_the_latest_value_per_key(compacting_broker):
    broker = compacting_broker
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1, topic_configs={
            "cleanup.policy": "compact",
            "segment.bytes": "4096",
            "segment.ms": "200",
            "min.cleanable.dirty.ratio": "0.01",
        })])
    finally:
        admin.close()

    # batches must fit in a (small) segment
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5, batch_size=2048)
    latest = {}
    produced_bytes = 0
    try:
        for round_ in range(ROUNDS):
            for k in range(KEYS):
                key = b"key-%02d" % k
                value = b"round-%03d-" % round_ + b"x" * 100
                producer.send(TOPIC, key=key, value=value)
                latest[key] = value
                produced_bytes += len(key) + len(value)
        producer.flush()

        # a record without a key has no place in a compacted topic
        with pytest.raises(InvalidRecordError):
            producer.send(TOPIC, key=None, value=b"no key").get(timeout=30)
    finally:
        producer.close()

    # Everything but the active segment is cleanable; wait for the cleaner to get there.
    def cleaned_up_to_active_segment() -> bool:
        active_base = int(segment_files(broker)[-1].split(".")[0])
        return active_base > 0 and cleaner_checkpoint(broker) >= active_base

    wait_until(cleaned_up_to_active_segment, 60, f"cleaner never caught up:\n{broker.tail()}")
    assert log_bytes(broker) * 4 < produced_bytes
    # config/logging.yaml sends the cleaner's lines to log-cleaner.log, under its ident
    cleaner_log = "".join(p.read_text(errors="replace") for p in sorted(broker.logs_dir.glob("log-cleaner.log*")))
    assert f"Cleaner 0: Beginning cleaning of log {TOPIC}-0." in cleaner_log
    assert "(kafka_py.log.log_cleaner)" in cleaner_log
    # and only there, as Kafka's LogCleaner logger (additivity=false)
    server_log = "".join(p.read_text(errors="replace") for p in sorted(broker.logs_dir.glob("server.log*")))
    assert "(kafka_py.log.log_cleaner)" not in server_log and "(kafka_py.log.log_cleaner)" not in broker.output()

    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
    tp = TopicPartition(TOPIC, 0)
    seen = {}
    count = 0
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        while consumer.position(tp) < end:
            for records in consumer.poll(timeout_ms=5000).values():
                for record in records:
                    seen[record.key] = record.value
                    count += 1
    finally:
        consumer.close()
    assert seen == latest
    # most overwrites are gone; what is left is one record per key plus the uncleaned head
    assert count < KEYS * ROUNDS // 4
