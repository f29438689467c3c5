"""A broker restarted in the middle of a test, cleanly (SIGTERM) and by kill -9: every
acknowledged record is still there afterwards and new records continue the offsets."""
from __future__ import annotations

import threading

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic


def create_topic(broker, topic: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def read_partition(broker, tp: TopicPartition) -> list:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
    try:
        end = consumer.end_offsets([tp])[tp]
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        records = []
        while len(records) < end:
            batch = consumer.poll(timeout_ms=20000)
            if not batch:
                break
            records.extend(batch.get(tp, []))
        return records
    finally:
        consumer.close()


def produce(broker, topic: str, values: list[bytes], partition: int = 0) -> list[int]:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    try:
        futures = [producer.send(topic, value=v, partition=partition) for v in values]
        producer.flush()
        return [f.get(timeout=30).offset for f in futures]
    finally:
        producer.close()


def test_clean_restart_keeps_records_and_offsets_continue(broker_factory):
    broker = broker_factory()
    broker.start()
    create_topic(broker, "durable", 2)
    first = [f"a-{i}".encode() for i in range(300)]
    assert produce(broker, "durable", first) == list(range(300))
    assert produce(broker, "durable", [b"p1"], partition=1) == [0]

    assert broker.stop() == 0
    assert (broker.log_dir / ".kafka_cleanshutdown").exists()
    broker.start()
    # The marker is consumed at startup: a crash from now on must recover.
    assert not (broker.log_dir / ".kafka_cleanshutdown").exists()

    tp = TopicPartition("durable", 0)
    assert [r.value for r in read_partition(broker, tp)] == first
    assert produce(broker, "durable", [b"after-restart"]) == [300]
    assert [r.value for r in read_partition(broker, TopicPartition("durable", 1))] == [b"p1"]
    assert broker.stop() == 0


def test_kill_9_mid_stream_keeps_every_acknowledged_record(broker_factory):
    broker = broker_factory()
    broker.start()
    create_topic(broker, "crashy", 1)
    tp = TopicPartition("crashy", 0)
    acknowledged: dict[int, bytes] = {}
    lock = threading.Lock()
    stop = threading.Event()
    enough = threading.Event()

    def keep_producing() -> None:
        # Short timeouts: once the broker is killed, what is still in flight fails quickly, so
        # the producer closes cleanly.
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5, retries=0,
                                 delivery_timeout_ms=3000, request_timeout_ms=2000, max_block_ms=2000)
        i = 0
        try:
            while not stop.is_set():
                value = f"v-{i}".encode()

                def on_ack(metadata, value=value) -> None:
                    with lock:
                        acknowledged[metadata.offset] = value
                        if len(acknowledged) >= 2000:
                            enough.set()

                producer.send("crashy", value=value).add_callback(on_ack)
                i += 1
                if i % 100 == 0:
                    producer.flush(timeout=10)
        except Exception:  # noqa: BLE001 - the broker is gone; sends fail from here on
            pass
        finally:
            producer.close(timeout=20)

    thread = threading.Thread(target=keep_producing)
    thread.start()
    assert enough.wait(60), "producer made no progress"
    broker.kill()  # mid-stream: no flush, no checkpoints, no clean-shutdown marker
    stop.set()
    thread.join(60)
    assert not (broker.log_dir / ".kafka_cleanshutdown").exists()

    broker.restart()
    records = read_partition(broker, tp)
    stored = {r.offset: r.value for r in records}
    with lock:
        missing = {o: v for o, v in acknowledged.items() if stored.get(o) != v}
    assert not missing, f"{len(missing)} acknowledged records lost, e.g. {list(missing.items())[:3]}"
    # offsets are dense and new records continue after the recovered end
    assert [r.offset for r in records] == list(range(len(records)))
    assert produce(broker, "crashy", [b"after-crash"]) == [len(records)]
    assert broker.stop() == 0
